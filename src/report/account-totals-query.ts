import { sql, type Kysely } from 'kysely';
import type { Schema } from '../db/schema.ts';
import type { AccountTotal } from './run-report.ts';

/**
 * What each processing account settled for the run's orders, per currency, from reporting.run_account_totals as an
 * accountant reads it: by account (the transactions of no account last), then currency. Bounded by accounts times
 * currencies. Expected money belongs to an order, not to an account: it stays in the bridge.
 */
export async function loadAccountTotals(db: Kysely<Schema>, runId: string): Promise<AccountTotal[]> {
  const rows = await db
    .selectFrom('reporting.run_account_totals')
    .select([
      'identifier',
      'account_group',
      'currency',
      'orders',
      'transactions',
      sql<string>`paid_minor::text`.as('paid'),
      sql<string>`refunded_minor::text`.as('refunded'),
      sql<string>`settled_minor::text`.as('settled'),
    ])
    .where('run_id', '=', runId)
    .orderBy('identifier', (order) => order.asc().nullsLast())
    .orderBy('currency', (order) => order.asc().nullsLast())
    .execute();
  return rows.map((row) => ({
    identifier: row.identifier,
    accountGroup: row.account_group,
    currency: row.currency?.trim() ?? null,
    orders: row.orders,
    transactions: row.transactions,
    paidMinor: row.paid,
    refundedMinor: row.refunded,
    settledMinor: row.settled,
  }));
}
