import type { PaymentClient } from './payment-client.ts';
import type { ExportScope } from '../db/schema.ts';

/** An account a nightly run asks for its exports, with the client that signs as it. */
export interface ExportAccount {
  readonly identifier: string;
  /** Accounts of one group are exported together: one request, by the group's first account. */
  readonly group?: string | undefined;
  readonly client: Pick<PaymentClient, 'getTransactions'>;
}

/** One export of a run's ORDERIDs: the account that signs it and the SCOPE it asks for. */
export interface ExportUnit {
  readonly identifier: string;
  readonly scope: ExportScope;
}

/**
 * Who is asked for a run's exports, in the accounts' order: each account outside a group by itself (SCOPE=CLIENT),
 * each group once, by its first account, with SCOPE=CLIENTSGROUP (the service exports the whole group).
 */
export function exportUnits(accounts: readonly Pick<ExportAccount, 'identifier' | 'group'>[]): ExportUnit[] {
  const groups = new Set<string>();
  const units: ExportUnit[] = [];
  for (const account of accounts) {
    if (account.group === undefined) {
      units.push({ identifier: account.identifier, scope: 'CLIENT' });
    } else if (!groups.has(account.group)) {
      groups.add(account.group);
      units.push({ identifier: account.identifier, scope: 'CLIENTSGROUP' });
    }
  }
  return units;
}
