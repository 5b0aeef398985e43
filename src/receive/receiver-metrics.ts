import { Counter, Histogram } from 'prom-client';
import type { MetricsRegistry } from '../metrics/metrics-registry.ts';
import type { RefusalReason } from './refusal.ts';

/** What the receiver counts, on the registry its process exposes on the admin listener's /metrics. */
export interface ReceiverMetrics {
  readonly deliveriesAccepted: Counter<'outcome'>;
  readonly deliveriesRefused: Counter<'reason'>;
  readonly deliveredBytes: Counter;
  /** Sizes of the deliveries stored, as sent (compressed). */
  readonly deliverySize: Histogram;
  readonly deliveryHookFailures: Counter;
  readonly notifications: Counter<'hash'>;
  readonly notificationsRepeated: Counter<'hash'>;
  readonly notificationsRefused: Counter<'reason'>;
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
/** The `hash` label of a stored notification: its HASH verified, did not match, or had no account to check it with. */
export const NOTIFICATION_HASH_OUTCOMES = ['valid', 'invalid', 'unknown_identifier', 'missing_identifier'] as const;
export type NotificationHashOutcome = (typeof NOTIFICATION_HASH_OUTCOMES)[number];

const NOTIFICATION_REFUSALS: readonly FailureReason[] = [
  'malformed',
  'too_large',
  'unsupported_type',
  'aborted',
  'slow',
  'busy',
  'error',
];

/** From 1 KiB to 4 GiB by fours: an export of a few orders is kilobytes, a month of a large shop a gigabyte. */
const DELIVERY_SIZE_BUCKETS = Array.from({ length: 12 }, (_, n) => 1024 * 4 ** n);

export function registerReceiverMetrics(registry: MetricsRegistry): ReceiverMetrics {
  const registers = [registry];
  const metrics: ReceiverMetrics = {
    deliveriesAccepted: new Counter({
      name: 'recon_deliveries_accepted_total',
      help: 'Export deliveries answered 200, by outcome: stored, or repeated (the same content again).',
      labelNames: ['outcome'],
      registers,
    }),
    deliveriesRefused: new Counter({
      name: 'recon_deliveries_refused_total',
      help: 'Export deliveries not stored, by reason.',
      labelNames: ['reason'],
      registers,
    }),
    deliveredBytes: new Counter({
      name: 'recon_delivered_bytes_total',
      help: 'Bytes of the export deliveries stored.',
      registers,
    }),
    deliverySize: new Histogram({
      name: 'recon_delivery_size_bytes',
      help: 'Sizes of the export deliveries stored, in bytes as sent (compressed).',
      buckets: DELIVERY_SIZE_BUCKETS,
      registers,
    }),
    deliveryHookFailures: new Counter({
      name: 'recon_delivery_hook_failures_total',
      help: 'Stored deliveries whose onDelivered call failed (they stay in state received).',
      registers,
    }),
    notifications: new Counter({
      name: 'recon_notifications_total',
      help: 'Notifications stored (a new one, not one received again), by whether their HASH was valid: valid, invalid (it does not match), or no account to check it with (unknown_identifier, missing_identifier).',
      labelNames: ['hash'],
      registers,
    }),
    notificationsRepeated: new Counter({
      name: 'recon_notifications_repeated_total',
      help: 'Notifications received again (the same fields and HASH as one stored): counted on the stored one, not stored again; by the same hash label.',
      labelNames: ['hash'],
      registers,
    }),
    notificationsRefused: new Counter({
      name: 'recon_notifications_refused_total',
      help: 'Notification requests not stored, by reason.',
      labelNames: ['reason'],
      registers,
    }),
  };
  // Every series from the start, so that a rate over the first event is not lost.
  for (const outcome of ['stored', 'repeated']) metrics.deliveriesAccepted.inc({ outcome }, 0);
  for (const reason of DELIVERY_REFUSALS) metrics.deliveriesRefused.inc({ reason }, 0);
  for (const hash of NOTIFICATION_HASH_OUTCOMES) {
    metrics.notifications.inc({ hash }, 0);
    metrics.notificationsRepeated.inc({ hash }, 0);
  }
  for (const reason of NOTIFICATION_REFUSALS) metrics.notificationsRefused.inc({ reason }, 0);
  return metrics;
}
