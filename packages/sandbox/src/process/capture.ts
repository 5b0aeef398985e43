import type { Params } from '@recon/protocol';
import { notifyOperation } from '../notifications/notify-operation.ts';
import type { SandboxAccount } from '../sandbox-accounts.ts';
import type { SandboxContext } from '../sandbox-context.ts';
import type { SandboxTransaction } from '../store.ts';
import { captureDeadline } from '../time-rules.ts';
import { firstInstalment, followUpRecord } from '../transaction-records.ts';
import { ProcessRefusal } from './process-answer.ts';
import { referencedTransaction } from './referenced-transaction.ts';

/**
 * E4: only a succeeded authorization, once, within 7 days of its success, for at most its amount (all of it
 * by default). An instalment capture is the first of the plan's 3 or 4 instalments, which the export shows.
 */
export function capture(ctx: SandboxContext, account: SandboxAccount, params: Params): SandboxTransaction {
  const now = ctx.clock.now();
  const authorization = referencedTransaction(ctx, account, params, now);
  if (authorization.operationType !== 'authorization') {
    throw new ProcessRefusal(
      '2005',
      `${authorization.transactionId} is a ${authorization.operationType}, not an authorization`,
    );
  }
  if (authorization.status !== 'succeeded') {
    throw new ProcessRefusal(
      '2003',
      `authorization ${authorization.transactionId} is ${describeStatus(authorization)}`,
    );
  }
  if (authorization.capturedAmount !== undefined) {
    throw new ProcessRefusal('2005', `authorization ${authorization.transactionId} is already captured`);
  }
  const deadline = captureDeadline(authorization);
  if (now.getTime() > deadline.getTime()) {
    throw new ProcessRefusal(
      '2009',
      `authorization ${authorization.transactionId} could be captured until ${deadline.toISOString()}`,
    );
  }
  const requested = params['AMOUNT'];
  const amount = requested === undefined ? authorization.amount : BigInt(requested as string);
  if (amount > authorization.amount) {
    throw new ProcessRefusal('2007', `AMOUNT ${amount} is above the authorized ${authorization.amount}`);
  }

  ctx.store.update(authorization.transactionId, { capturedAmount: amount });
  const captured = ctx.store.add({
    ...followUpRecord(ctx.store, authorization, 'capture', amount, params, now),
    restingAmount: amount,
    ...(authorization.paymentOption ? { schedule: firstInstalment(authorization.paymentOption) } : {}),
  });
  notifyOperation(ctx, captured);
  return captured;
}

function describeStatus(transaction: SandboxTransaction): string {
  switch (transaction.status) {
    case 'awaiting-cardholder':
      return 'still awaiting the cardholder';
    case 'pending-approval':
      return 'waiting for approval (0003)';
    case 'expired':
      return 'expired without approval: treated as failed';
    case 'refused':
      return `refused (${transaction.execCode})`;
    case 'succeeded':
      return 'succeeded';
  }
}
