import type { SandboxStore, SandboxTransaction } from './store.ts';

const DAY_MS = 24 * 60 * 60 * 1000;
/** An instalment authorization waiting for approval (0003) takes an update for 6 days, then expires. */
export const APPROVAL_WAIT_MS = 6 * DAY_MS;
/** An authorization can be captured for 7 days after it succeeded. */
export const CAPTURE_WINDOW_MS = 7 * DAY_MS;

export function approvalDeadline(pending: SandboxTransaction): Date {
  return new Date(pending.updatedAt.getTime() + APPROVAL_WAIT_MS);
}

export function captureDeadline(authorization: SandboxTransaction): Date {
  return new Date(authorization.updatedAt.getTime() + CAPTURE_WINDOW_MS);
}

/**
 * Expires the transaction if it is a pending approval past its deadline, and returns its current record.
 * Expiry is settled lazily on every read and eagerly when the clock moves, so no timer has to run.
 * The code stays 0003: the service documents that a 0003 older than 6 days is to be treated as failed,
 * so what a merchant observes (and exports) is the 0003; the status says it expired.
 */
export function settleExpiry(store: SandboxStore, transaction: SandboxTransaction, now: Date): SandboxTransaction {
  if (transaction.status !== 'pending-approval') return transaction;
  const deadline = approvalDeadline(transaction);
  if (now.getTime() <= deadline.getTime()) return transaction;
  return store.update(transaction.transactionId, {
    status: 'expired',
    message: 'Waiting for approval expired after 6 days without update: treated as failed',
    updatedAt: deadline,
  });
}

/** The transaction with its expiry settled, or undefined when the id is unknown. */
export function currentTransaction(
  store: SandboxStore,
  transactionId: string,
  now: Date,
): SandboxTransaction | undefined {
  const transaction = store.get(transactionId);
  return transaction && settleExpiry(store, transaction, now);
}

export function expireOverdueApprovals(store: SandboxStore, now: Date): SandboxTransaction[] {
  return store
    .all()
    .filter((transaction) => transaction.status === 'pending-approval')
    .map((pending) => settleExpiry(store, pending, now))
    .filter((transaction) => transaction.status === 'expired');
}
