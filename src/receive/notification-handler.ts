import type { IncomingMessage, ServerResponse } from 'node:http';
import type { NotificationInvalidReason } from '../db/schema.ts';
import { recordNotification } from '../notifications/record-notification.ts';
import { GateBusyError } from './concurrency-gate.ts';
import { readNotification } from './notification-fields.ts';
import type { ReceiverContext } from './receiver-context.ts';
import type { NotificationHashOutcome } from './receiver-metrics.ts';
import { ClientGoneError, Refusal } from './refusal.ts';
import { answer, answerEarly } from './respond.ts';
import { SlowClientError } from './slow-client-guard.ts';

/**
 * GET or POST /notify: every notification is stored raw, unknown fields and any byte included, whatever its HASH;
 * one whose HASH verifies with the secret of its IDENTIFIER's account is answered `OK`; one with a bad HASH, or whose
 * IDENTIFIER is missing or names none of the merchant's accounts, 400 (stored with hash_valid false and the reason,
 * never believed).
 * A notification received again (the same fields, HASH included) is answered the same and counted on the one stored.
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
        accounts: ctx.accounts,
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
  const counter = recorded.receipts === 1 ? ctx.metrics.notifications : ctx.metrics.notificationsRepeated;
  counter.inc({ hash: hashOutcome(recorded.invalidReason) });
  ctx.emit({ type: 'notification', ...recorded });
  if (recorded.invalidReason === null) answer(response, 200, 'OK');
  else answer(response, 400, `${INVALID_ANSWERS[recorded.invalidReason]} (notification kept, not trusted)`);
}

const INVALID_ANSWERS: Readonly<Record<NotificationInvalidReason, string>> = {
  hash_mismatch: 'HASH does not match',
  unknown_identifier: "IDENTIFIER names none of the merchant's accounts",
  missing_identifier: 'IDENTIFIER is missing',
};

function hashOutcome(reason: NotificationInvalidReason | null): NotificationHashOutcome {
  return reason === null ? 'valid' : reason === 'hash_mismatch' ? 'invalid' : reason;
}
