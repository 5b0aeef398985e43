import type { Counter, MetricsRegistry } from '../metrics/metrics-registry.ts';
import type { RefusalReason } from './refusal.ts';

/** What the receiver counts, on the registry the whole `recon serve` process exposes at /metrics. */
export interface ReceiverMetrics {
  /** outcome: stored | repeated. */
  readonly deliveriesAccepted: Counter;
  /**
   * reason: a RefusalReason, `aborted` (the sender went away), `slow` (it trickled), `busy` (no free slot: answered
   * 503) or `error` (recon could not store it).
   */
  readonly deliveriesRefused: Counter;
  readonly deliveredBytes: Counter;
  readonly deliveryHookFailures: Counter;
  /** hash: valid | invalid (both stored). */
  readonly notifications: Counter;
  readonly notificationsRefused: Counter;
}

export type FailureReason = RefusalReason | 'aborted' | 'slow' | 'busy' | 'error';

const DELIVERY_REFUSALS: readonly FailureReason[] = [
  'unknown_token',
  'token_expired',
  'token_used',
  'too_large',
  'empty',
  'bad_upload',
  'unsupported_type',
  'aborted',
  'slow',
  'busy',
  'error',
];
const NOTIFICATION_REFUSALS: readonly FailureReason[] = [
  'malformed',
  'too_large',
  'unsupported_type',
  'aborted',
  'slow',
  'busy',
  'error',
];

export function registerReceiverMetrics(registry: MetricsRegistry): ReceiverMetrics {
  const metrics: ReceiverMetrics = {
    deliveriesAccepted: registry.counter(
      'recon_deliveries_accepted_total',
      'Export deliveries answered 200, by outcome: stored, or repeated (the same content again).',
    ),
    deliveriesRefused: registry.counter('recon_deliveries_refused_total', 'Export deliveries not stored, by reason.'),
    deliveredBytes: registry.counter('recon_delivered_bytes_total', 'Bytes of the export deliveries stored.'),
    deliveryHookFailures: registry.counter(
      'recon_delivery_hook_failures_total',
      'Stored deliveries whose onDelivered call failed (they stay in state received).',
    ),
    notifications: registry.counter(
      'recon_notifications_total',
      'Notifications stored, by whether their HASH was valid.',
    ),
    notificationsRefused: registry.counter(
      'recon_notifications_refused_total',
      'Notification requests not stored, by reason.',
    ),
  };
  // Every series from the start, so that a rate over the first event is not lost.
  for (const outcome of ['stored', 'repeated']) metrics.deliveriesAccepted.inc({ outcome }, 0);
  for (const reason of DELIVERY_REFUSALS) metrics.deliveriesRefused.inc({ reason }, 0);
  metrics.deliveredBytes.inc({}, 0);
  metrics.deliveryHookFailures.inc({}, 0);
  for (const hash of ['valid', 'invalid']) metrics.notifications.inc({ hash }, 0);
  for (const reason of NOTIFICATION_REFUSALS) metrics.notificationsRefused.inc({ reason }, 0);
  return metrics;
}
