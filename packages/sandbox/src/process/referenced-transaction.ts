import { invalidParameter, type Params } from '@recon/protocol';
import type { SandboxAccount } from '../sandbox-accounts.ts';
import type { SandboxContext } from '../sandbox-context.ts';
import type { SandboxTransaction } from '../store.ts';
import { currentTransaction } from '../time-rules.ts';
import { ProcessRefusal } from './process-answer.ts';

/**
 * The transaction a capture or refund names by TRANSACTIONID, which must belong to ORDERID: 2002 when unknown or made on
 * another account, as the service knows only the requesting account's references.
 */
export function referencedTransaction(
  ctx: SandboxContext,
  account: SandboxAccount,
  params: Params,
  now: Date,
): SandboxTransaction {
  const transactionId = params['TRANSACTIONID'] as string;
  const transaction = currentTransaction(ctx.store, transactionId, now);
  if (!transaction || transaction.identifier !== account.identifier) {
    throw new ProcessRefusal('2002', `no transaction ${transactionId} on this account`);
  }
  if (params['ORDERID'] !== transaction.orderId) {
    throw invalidParameter('ORDERID', `transaction ${transactionId} belongs to another order`);
  }
  return transaction;
}
