import type { Params } from '@recon/protocol';
import { notifyOperation } from '../notifications/notify-operation.ts';
import type { SandboxAccount } from '../sandbox-accounts.ts';
import type { SandboxContext } from '../sandbox-context.ts';
import type { SandboxTransaction } from '../store.ts';
import { followUpRecord } from '../transaction-records.ts';
import { ProcessRefusal } from './process-answer.ts';
import { referencedTransaction } from './referenced-transaction.ts';

/**
 * E5: the instalment method refunds a capture; the wallet a payment or a capture. At most the resting
 * amount (all of it by default), which the refund lowers.
 */
export function refund(ctx: SandboxContext, account: SandboxAccount, params: Params): SandboxTransaction {
  const now = ctx.clock.now();
  const refunded = referencedTransaction(ctx, account, params, now);
  const refundable = refunded.method === 'instalment' ? ['capture'] : ['payment', 'capture'];
  if (!refundable.includes(refunded.operationType)) {
    const what =
      refunded.method === 'instalment'
        ? 'the instalment method refunds captures only'
        : 'the wallet refunds payments and captures only';
    throw new ProcessRefusal('2004', `${refunded.transactionId} is a ${refunded.operationType}: ${what}`);
  }
  if (refunded.status !== 'succeeded') {
    throw new ProcessRefusal(
      '2004',
      `${refunded.operationType} ${refunded.transactionId} did not succeed (${refunded.status})`,
    );
  }
  const resting = refunded.restingAmount ?? 0n;
  if (resting === 0n) {
    throw new ProcessRefusal('2004', `${refunded.operationType} ${refunded.transactionId} is refunded in full already`);
  }
  const requested = params['AMOUNT'];
  const amount = requested === undefined ? resting : BigInt(requested as string);
  if (amount > resting) {
    throw new ProcessRefusal(
      '2008',
      `AMOUNT ${amount} is above the resting amount ${resting} of ${refunded.transactionId}`,
    );
  }

  ctx.store.update(refunded.transactionId, { restingAmount: resting - amount });
  const refund = ctx.store.add(followUpRecord(ctx.store, refunded, 'refund', amount, params, now));
  notifyOperation(ctx, refund);
  return refund;
}
