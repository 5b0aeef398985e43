import { notifyOperation } from '../notifications/notify-operation.ts';
import type { SandboxContext } from '../sandbox-context.ts';
import type { SandboxTransaction } from '../store.ts';
import { currentTransaction } from '../time-rules.ts';
import { PENDING_APPROVAL, REFUSED, succeededStart } from '../transaction-records.ts';

export const CARDHOLDER_OUTCOMES = ['validated', 'pending', 'refused'] as const;
export type CardholderOutcome = (typeof CARDHOLDER_OUTCOMES)[number];

export function isCardholderOutcome(value: unknown): value is CardholderOutcome {
  return (CARDHOLDER_OUTCOMES as readonly unknown[]).includes(value);
}

export type CardholderStepResult =
  | { readonly ok: true; readonly transaction: SandboxTransaction }
  | {
      readonly ok: false;
      readonly reason: 'not-found' | 'not-allowed';
      readonly message: string;
      readonly transaction?: SandboxTransaction;
    };

/**
 * The cardholder's answer on the payment method's page, or the later update of a pending approval.
 *
 * Both are notified. The state table lists no effect for the update, but the Events section says the
 * notification carries "the final result of the cardholder's step", and a 0003 is not final: without a
 * second notification the merchant would learn that an approval was granted or refused only by polling
 * getTransactions. The expiry after 6 days is not notified: the service documents that a 0003 older than
 * 6 days is to be treated as failed, so the merchant learns it from the 0003 notification and the rule,
 * and a notification would have to invent an EXECCODE the service never shows (the export keeps 0003).
 */
export function finishCardholderStep(
  ctx: SandboxContext,
  transactionId: string,
  outcome: CardholderOutcome,
): CardholderStepResult {
  const now = ctx.clock.now();
  const transaction = currentTransaction(ctx.store, transactionId, now);
  if (!transaction || (transaction.operationType !== 'payment' && transaction.operationType !== 'authorization')) {
    return {
      ok: false,
      reason: 'not-found',
      message: `no payment or authorization ${transactionId} awaits the cardholder`,
    };
  }
  const refuse = (message: string): CardholderStepResult => ({
    ok: false,
    reason: 'not-allowed',
    message,
    transaction,
  });

  if (transaction.status === 'awaiting-cardholder' && outcome === 'pending' && transaction.method !== 'instalment') {
    return refuse('waiting for approval exists only for the instalment method');
  }
  if (transaction.status === 'pending-approval' && outcome === 'pending') {
    return refuse('the authorization is already waiting for approval');
  }
  if (transaction.status === 'awaiting-cardholder' || transaction.status === 'pending-approval') {
    const settled = ctx.store.update(transactionId, { ...settlement(transaction, outcome), updatedAt: now });
    notifyOperation(ctx, settled);
    return { ok: true, transaction: settled };
  }
  if (transaction.status === 'expired') {
    return refuse('the approval wait expired after 6 days: the authorization is treated as failed');
  }
  return refuse(`the cardholder step is over: the ${transaction.operationType} is ${transaction.status}`);
}

function settlement(transaction: SandboxTransaction, outcome: CardholderOutcome): Partial<SandboxTransaction> {
  switch (outcome) {
    case 'validated':
      return succeededStart(transaction);
    case 'pending':
      return PENDING_APPROVAL;
    case 'refused':
      return REFUSED;
  }
}
