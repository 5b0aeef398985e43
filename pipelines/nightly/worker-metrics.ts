import { Counter, Histogram } from 'prom-client';
import type { MetricsRegistry } from '../../src/metrics/metrics-registry.ts';
import { QUEUES } from '../../src/queue/job-queue.ts';

/** What a worker counts, on the registry of its process (`recon serve` or `recon worker`). */
export interface WorkerMetrics {
  /** outcome: completed, or failed (pg-boss retries it until its retries run out). */
  readonly jobs: Counter<'queue' | 'outcome'>;
  /**
   * Per ingest attempt of a delivered file; outcome: loaded, duplicate, failed (the file is bad), error (the attempt
   * broke off, the database or the stored bytes at fault: retried, or quarantined).
   */
  readonly ingestSeconds: Histogram<'outcome'>;
  /** Per nightly run reconciled. */
  readonly reconcileSeconds: Histogram;
}

/** A delivery of a few orders takes a fraction of a second, a million rows a minute or two. */
const SECONDS_BUCKETS = [0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800];

export function registerWorkerMetrics(registry: MetricsRegistry): WorkerMetrics {
  const registers = [registry];
  const metrics: WorkerMetrics = {
    jobs: new Counter({
      name: 'recon_jobs_processed_total',
      help: 'Jobs this process ran, by queue and outcome (completed, or failed: retried until its retries run out).',
      labelNames: ['queue', 'outcome'],
      registers,
    }),
    ingestSeconds: new Histogram({
      name: 'recon_ingest_duration_seconds',
      help: 'Ingest attempts of delivered files, by outcome (loaded, duplicate, failed: a bad file; error: the attempt broke off).',
      labelNames: ['outcome'],
      buckets: SECONDS_BUCKETS,
      registers,
    }),
    reconcileSeconds: new Histogram({
      name: 'recon_reconcile_duration_seconds',
      help: "Reconciliation of each nightly run's orders.",
      buckets: SECONDS_BUCKETS,
      registers,
    }),
  };
  // Every series from the start, so that a rate over the first event is not lost.
  for (const queue of Object.values(QUEUES))
    for (const outcome of ['completed', 'failed']) metrics.jobs.inc({ queue, outcome }, 0);
  return metrics;
}
