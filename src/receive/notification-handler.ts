import type { IncomingMessage, ServerResponse } from 'node:http';
import { recordNotification } from '../notifications/record-notification.ts';
import { readNotificationFields } from './notification-fields.ts';
import type { ReceiverContext } from './receiver-context.ts';
import { ClientGoneError, Refusal } from './refusal.ts';
import { answer, answerEarly } from './respond.ts';

/**
 * GET or POST /notify: every notification is stored raw, unknown fields included, whatever its HASH; one with a
 * valid HASH is answered `OK`, one with a bad HASH 400 (stored with hash_valid false, never believed). A request
 * that is not a notification at all (no fields, a repeated field, not a form) is refused and not stored.
 */
export async function handleNotification(ctx: ReceiverContext, request: IncomingMessage, response: ServerResponse, url: URL): Promise<void> {
  let recorded;
  try {
    const fields = await readNotificationFields(request, url);
    recorded = await recordNotification(ctx.db, fields, { secret: ctx.secret, receivedAt: ctx.now() });
  } catch (error) {
    if (error instanceof Refusal) {
      ctx.metrics.notificationsRefused.inc({ reason: error.reason });
      ctx.emit({ type: 'notification-refused', status: error.status, reason: error.reason, message: error.message });
      return answerEarly(request, response, error.status, error.message);
    }
    if (error instanceof ClientGoneError) {
      ctx.metrics.notificationsRefused.inc({ reason: 'aborted' });
      ctx.emit({ type: 'notification-refused', status: null, reason: 'aborted', message: error.message });
      return;
    }
    ctx.metrics.notificationsRefused.inc({ reason: 'error' });
    ctx.emit({ type: 'internal-error', path: request.url ?? '', error });
    // Not OK: the service sends it again.
    return answerEarly(request, response, 500, 'the notification could not be stored, try again later');
  }
  ctx.metrics.notifications.inc({ hash: recorded.hashValid ? 'valid' : 'invalid' });
  ctx.emit({ type: 'notification', ...recorded });
  if (recorded.hashValid) answer(response, 200, 'OK');
  else answer(response, 400, 'HASH does not match (notification kept, not trusted)');
}
