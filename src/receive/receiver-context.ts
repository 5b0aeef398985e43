import type { Kysely } from 'kysely';
import type { Schema } from '../db/schema.ts';
import type { ReceiverEvent } from './receiver-event.ts';
import type { ReceiverMetrics } from './receiver-metrics.ts';

/** What the receiver's handlers share, built once by createReceiver. */
export interface ReceiverContext {
  readonly db: Kysely<Schema>;
  readonly secret: string;
  readonly maxFileBytes: number;
  readonly now: () => Date;
  readonly metrics: ReceiverMetrics;
  readonly onDelivered: (deliveryId: string) => void | Promise<void>;
  /** Never throws. */
  readonly emit: (event: ReceiverEvent) => void;
}
