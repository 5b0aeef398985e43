import { originOf, type SandboxContext } from '../sandbox-context.ts';
import type { SandboxTransaction } from '../store.ts';
import { notificationFields } from './notification-fields.ts';

/**
 * Queues the notification of one finished operation; delivery runs in the background. An instalment refund carries
 * the reference the voucher network gives it, drawn here so that every refund notified has its own.
 */
export function notifyOperation(ctx: SandboxContext, transaction: SandboxTransaction): void {
  const instalmentRefund = transaction.method === 'instalment' && transaction.operationType === 'refund';
  const fields = notificationFields({
    transaction,
    origin: originOf(ctx.store, transaction),
    descriptor: ctx.descriptor,
    ...(instalmentRefund ? { externalReference: ctx.nextExternalReference() } : {}),
  });
  ctx.outbox.send(fields);
}
