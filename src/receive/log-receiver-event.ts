import type { NotificationInvalidReason } from '../db/schema.ts';
import type { Logger } from '../log/logger.ts';
import type { ReceiverEvent } from './receiver-event.ts';

const NOT_TRUSTED: Readonly<Record<NotificationInvalidReason, string>> = {
  hash_mismatch: 'notification received with a wrong HASH',
  unknown_identifier: "notification received for an IDENTIFIER of none of the merchant's accounts",
  missing_identifier: 'notification received without an IDENTIFIER',
};

/** The routes an internal error is named by: a delivery's path holds its token, a notification's query its HASH. */
const NAMED_ROUTES: ReadonlySet<string> = new Set(['/notify', '/healthz', '/metrics']);

/**
 * A receiver event as a log record: deliveries and notifications received at info, refusals at warn (with the
 * status and reason the sender was answered), failures at error. Ids and sizes only: never a token, a form or a body.
 */
export function logReceiverEvent(log: Logger, event: ReceiverEvent): void {
  switch (event.type) {
    case 'delivery-receiving':
      return log.debug({ request: event.requestId }, 'delivery receiving');
    case 'delivery-accepted':
      return log.info(
        {
          delivery: event.deliveryId,
          request: event.requestId,
          bytes: event.bytes,
          outcome: event.outcome,
        },
        event.outcome === 'stored' ? 'delivery received' : 'delivery repeated, already stored',
      );
    case 'delivery-refused':
      return log.warn(
        { status: event.status, reason: event.reason, tokenPrefix: event.tokenPrefix },
        `delivery refused: ${event.message}`,
      );
    case 'delivery-hook-failed':
      return log.error(
        { delivery: event.deliveryId, err: event.error },
        'delivery stored but not enqueued: the sweep enqueues it',
      );
    case 'notification': {
      const again = event.receipts > 1 ? ' again' : '';
      return event.invalidReason === null
        ? log.info(
            { notification: event.notificationId, hashValid: true, receipts: event.receipts },
            `notification received${again}`,
          )
        : log.warn(
            {
              notification: event.notificationId,
              hashValid: false,
              reason: event.invalidReason,
              receipts: event.receipts,
            },
            `${NOT_TRUSTED[event.invalidReason]}${again}`,
          );
    }
    case 'notification-refused':
      return log.warn({ status: event.status, reason: event.reason }, `notification refused: ${event.message}`);
    case 'internal-error':
      return log.error({ route: routeOf(event.path), err: event.error }, 'internal error');
  }
}

function routeOf(target: string): string {
  const path = target.split('?', 1)[0]!;
  return NAMED_ROUTES.has(path) ? path : 'delivery';
}
