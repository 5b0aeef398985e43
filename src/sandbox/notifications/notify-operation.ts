import { originOf, type SandboxContext } from '../sandbox-context.ts';
import type { SandboxTransaction } from '../store.ts';
import { notificationFields } from './notification-fields.ts';

/** Queues the notification of one finished operation; delivery runs in the background. */
export function notifyOperation(ctx: SandboxContext, transaction: SandboxTransaction, externalReference?: string): void {
  const fields = notificationFields({
    transaction,
    origin: originOf(ctx.store, transaction),
    descriptor: ctx.descriptor,
    externalReference,
  });
  ctx.outbox.send(fields);
}
