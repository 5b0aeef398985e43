import { sql, type Kysely } from 'kysely';
import type { Schema } from '../db/schema.ts';
import type { ReceivedLine } from './run-report.ts';

/**
 * The run's money received reconciled with its bridge's settled, per currency, from reporting.received_to_bridge as
 * an accountant reads it: a few rows a run, read from the totals the run wrote when it finished.
 */
export async function loadReceivedToBridge(db: Kysely<Schema>, runId: string): Promise<ReceivedLine[]> {
  const rows = await db
    .selectFrom('reporting.received_to_bridge')
    .select([
      'currency',
      'line',
      'orders',
      'transactions',
      sql<string>`amount_minor::text`.as('amount_minor'),
      sql<string | null>`fees_minor::text`.as('fees_minor'),
    ])
    .where('run_id', '=', runId)
    .orderBy('currency')
    .orderBy('step')
    .execute();
  return rows.map((row) => ({
    currency: row.currency.trim(),
    line: row.line,
    orders: row.orders,
    transactions: row.transactions,
    amountMinor: row.amount_minor,
    feesMinor: row.fees_minor,
  }));
}
