import type { NotificationInvalidReason } from '../db/schema.ts';
import type { FailureReason } from './receiver-metrics.ts';

/** What the receiver did, for the serve command's log (log-receiver-event.ts); never thrown, and a listener's failure is ignored. */
export type ReceiverEvent =
  /** A token was found open and its body is being read (a long upload shows as it starts). */
  | { readonly type: 'delivery-receiving'; readonly requestId: string }
  | {
      readonly type: 'delivery-accepted';
      readonly outcome: 'stored' | 'repeated';
      readonly requestId: string;
      readonly deliveryId: string;
      readonly sha256: string;
      readonly bytes: number;
    }
  | {
      readonly type: 'delivery-refused';
      readonly status: number | null;
      readonly reason: FailureReason;
      readonly message: string;
      /** The token's first characters, to tell deliveries apart: the whole token is a key to the receiver. */
      readonly tokenPrefix: string;
    }
  /** recon's own probe of its callback base reached this receiver. */
  | { readonly type: 'probe-received' }
  | { readonly type: 'delivery-hook-failed'; readonly deliveryId: string; readonly error: unknown }
  | {
      readonly type: 'notification';
      readonly notificationId: string;
      readonly hashValid: boolean;
      /** Why it is not trusted; null when valid. */
      readonly invalidReason: NotificationInvalidReason | null;
      /** How many times it was received, this time included: 1 the first time. */
      readonly receipts: number;
    }
  | {
      readonly type: 'notification-refused';
      readonly status: number | null;
      readonly reason: FailureReason;
      readonly message: string;
    }
  /** An unexpected failure answered 500 (or not at all, when it happened after the answer). */
  | { readonly type: 'internal-error'; readonly path: string; readonly error: unknown };
