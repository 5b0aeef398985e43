import type { Kysely } from 'kysely';
import type { Schema } from '../db/schema.ts';
import type { SigningAccount } from '../notifications/check-notification-hash.ts';
import type { ConcurrencyGate } from './concurrency-gate.ts';
import type { ReceiverEvent } from './receiver-event.ts';
import type { ReceiverMetrics } from './receiver-metrics.ts';
import type { SpoolOptions } from './spool-upload.ts';

/** What the receiver's handlers share, built once by createReceiver. */
export interface ReceiverContext {
  readonly db: Kysely<Schema>;
  /** The merchant's accounts: a notification is checked with the secret of the one its IDENTIFIER names. */
  readonly accounts: readonly SigningAccount[];
  readonly spool: SpoolOptions;
  /** Uploads being spooled at once: past it a delivery is answered 503 before its body is read. */
  readonly uploads: ConcurrencyGate;
  /** The shares of the pooled database connections that deliveries and notifications may hold at once. */
  readonly deliveryQueries: ConcurrencyGate;
  readonly notificationQueries: ConcurrencyGate;
  readonly now: () => Date;
  readonly metrics: ReceiverMetrics;
  readonly onDelivered: (deliveryId: string) => void | Promise<void>;
  /** Never throws. */
  readonly emit: (event: ReceiverEvent) => void;
}
