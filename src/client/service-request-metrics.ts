import { Histogram } from 'prom-client';
import type { MetricsRegistry } from '../metrics/metrics-registry.ts';
import type { ServiceAttempt } from './service-attempt.ts';

/** A getTransactions of a few hundred orders answers in about a second; the client gives up at 30 s. */
const REQUEST_SECONDS_BUCKETS = [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 30];

/**
 * recon_service_request_duration_seconds{operation, outcome}: each attempt of a request to the payment service
 * (ServiceAttempt's outcome: the EXECCODE class or why there was none). Returns the client's onAttempt.
 */
export function registerServiceRequestMetrics(registry: MetricsRegistry): (attempt: ServiceAttempt) => void {
  const histogram = new Histogram({
    name: 'recon_service_request_duration_seconds',
    help: 'Requests to the payment service, each attempt, by operation and outcome (EXECCODE class 0xxx-6xxx, timeout, network, bad_answer).',
    labelNames: ['operation', 'outcome'],
    buckets: REQUEST_SECONDS_BUCKETS,
    registers: [registry],
  });
  return (attempt) => histogram.observe({ operation: attempt.operation, outcome: attempt.outcome }, attempt.seconds);
}
