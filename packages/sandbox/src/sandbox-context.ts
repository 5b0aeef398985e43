import type { SandboxClock } from './clock.ts';
import type { NotificationOutbox } from './notifications/notification-outbox.ts';
import type { SandboxAccounts } from './sandbox-accounts.ts';
import type { SandboxStore, SandboxTransaction } from './store.ts';

/** What the sandbox's operations share: the accounts it serves, its store and clock, and where notifications go. */
export interface SandboxContext {
  readonly accounts: SandboxAccounts;
  /** The label the service sends to the bank network, echoed as DESCRIPTOR. */
  readonly descriptor: string;
  readonly store: SandboxStore;
  readonly clock: SandboxClock;
  readonly outbox: NotificationOutbox;
  /** The 9-digit reference the voucher network gives an instalment refund. */
  nextExternalReference(): string;
}

/** The payment or authorization a capture or refund descends from (the transaction itself for those). */
export function originOf(store: SandboxStore, transaction: SandboxTransaction): SandboxTransaction {
  let current = transaction;
  while (current.operationType === 'capture' || current.operationType === 'refund') {
    const parent = current.parentTransactionId && store.get(current.parentTransactionId);
    if (!parent) break;
    current = parent;
  }
  return current;
}
