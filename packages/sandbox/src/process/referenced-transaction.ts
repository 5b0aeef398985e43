import { invalidParameter, type Params } from '@recon/protocol';
import type { SandboxContext } from '../sandbox-context.ts';
import type { SandboxTransaction } from '../store.ts';
import { currentTransaction } from '../time-rules.ts';
import { ProcessRefusal } from './process-answer.ts';

/** The transaction a capture or refund names by TRANSACTIONID (2002 when unknown), which must belong to ORDERID. */
export function referencedTransaction(ctx: SandboxContext, params: Params, now: Date): SandboxTransaction {
  const transactionId = params['TRANSACTIONID'] as string;
  const transaction = currentTransaction(ctx.store, transactionId, now);
  if (!transaction || transaction.identifier !== ctx.identifier) {
    throw new ProcessRefusal('2002', `no transaction ${transactionId} on this account`);
  }
  if (params['ORDERID'] !== transaction.orderId) {
    throw invalidParameter('ORDERID', `transaction ${transactionId} belongs to another order`);
  }
  return transaction;
}
