import { sql, type Kysely } from 'kysely';
import type { Schema } from '../db/schema.ts';

/** What one account settled for a run's orders, in one currency (reporting.run_account_totals). */
export interface AccountTotal {
  /** Null for transactions that name no account. */
  readonly identifier: string | null;
  readonly accountGroup: string | null;
  readonly currency: string | null;
  readonly orders: number;
  readonly transactions: number;
  /** Minor units, as digit strings: paid - refunded. */
  readonly settledMinor: string;
}

/** A finished run's bridge per account and currency, by account then currency. */
export async function runAccountTotals(db: Kysely<Schema>, runId: string): Promise<AccountTotal[]> {
  // An accountants' view, untyped in schema.ts: read with a query of its own.
  const { rows } = await sql<{
    identifier: string | null;
    account_group: string | null;
    currency: string | null;
    orders: number;
    transactions: number;
    settled_minor: string;
  }>`SELECT identifier, account_group, currency, orders, transactions, settled_minor::text AS settled_minor
    FROM reporting.run_account_totals WHERE run_id = ${runId}::bigint
    ORDER BY identifier NULLS LAST, currency`.execute(db);
  return rows.map((row) => ({
    identifier: row.identifier,
    accountGroup: row.account_group,
    currency: row.currency?.trim() ?? null,
    orders: row.orders,
    transactions: row.transactions,
    settledMinor: row.settled_minor,
  }));
}
