import type { IncomingMessage, ServerResponse } from 'node:http';
import { recordNotification } from '../notifications/record-notification.ts';
import { GateBusyError } from './concurrency-gate.ts';
import { readNotification } from './notification-fields.ts';
import type { ReceiverContext } from './receiver-context.ts';
import { ClientGoneError, Refusal } from './refusal.ts';
import { answer, answerEarly } from './respond.ts';
import { SlowClientError } from './slow-client-guard.ts';

/**
 * GET or POST /notify: every notification is stored raw, unknown fields and any byte included, whatever its HASH;
 * one with a valid HASH is answered `OK`, one with a bad HASH 400 (stored with hash_valid false, never believed).
 * A request that is not a notification at all (no fields, a repeated field, not a form) is refused and not stored.
 */
export async function handleNotification(
  ctx: ReceiverContext,
  request: IncomingMessage,
  response: ServerResponse,
): Promise<void> {
  let recorded;
  try {
    const notification = await readNotification(request, ctx.spool.slowClient);
    recorded = await ctx.notificationQueries.run(() =>
      recordNotification(ctx.db, notification.fields, {
        secret: ctx.secret,
        receivedAt: ctx.now(),
        raw: notification.raw,
      }),
    );
  } catch (error) {
    if (error instanceof Refusal) {
      ctx.metrics.notificationsRefused.inc({ reason: error.reason });
      ctx.emit({ type: 'notification-refused', status: error.status, reason: error.reason, message: error.message });
      return answerEarly(request, response, error.status, error.message);
    }
    if (error instanceof ClientGoneError || error instanceof SlowClientError) {
      const reason = error instanceof SlowClientError ? 'slow' : 'aborted';
      ctx.metrics.notificationsRefused.inc({ reason });
      ctx.emit({ type: 'notification-refused', status: null, reason, message: error.message });
      return;
    }
    const busy = error instanceof GateBusyError;
    ctx.metrics.notificationsRefused.inc({ reason: busy ? 'busy' : 'error' });
    if (busy) ctx.emit({ type: 'notification-refused', status: 503, reason: 'busy', message: error.message });
    else ctx.emit({ type: 'internal-error', path: request.url ?? '', error });
    // Not OK: the service sends it again.
    return answerEarly(
      request,
      response,
      busy ? 503 : 500,
      busy ? error.message : 'the notification could not be stored, try again later',
    );
  }
  ctx.metrics.notifications.inc({ hash: recorded.hashValid ? 'valid' : 'invalid' });
  ctx.emit({ type: 'notification', ...recorded });
  if (recorded.hashValid) answer(response, 200, 'OK');
  else answer(response, 400, 'HASH does not match (notification kept, not trusted)');
}
