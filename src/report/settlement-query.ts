import { sql, type Kysely } from 'kysely';
import type { Schema } from '../db/schema.ts';
import type { SettlementDay } from './run-report.ts';

/**
 * The money moved on the days from `days.from` (or the first) to `days.to`, read from reporting.settlement_daily as an
 * accountant reads it. The view's days are dates in the session's recon.report_timezone: set here for this
 * transaction only (set_config's `true`), so that neither a pooled PostgreSQL connection nor PGlite's one connection
 * keeps it for the next query.
 */
export async function loadMoneyMoved(
  db: Kysely<Schema>,
  days: { readonly from?: string; readonly to: string },
  timeZone: string,
): Promise<SettlementDay[]> {
  const rows = await db.transaction().execute(async (trx) => {
    await sql`SELECT set_config('recon.report_timezone', ${timeZone}, true)`.execute(trx);
    return trx
      .selectFrom('reporting.settlement_daily')
      .select([
        sql<string>`day::text`.as('day_text'),
        'currency',
        'transactions',
        'payments',
        'refunds',
        sql<string>`paid_minor::text`.as('paid_minor'),
        sql<string>`refunded_minor::text`.as('refunded_minor'),
        sql<string>`fees_minor::text`.as('fees_minor'),
        sql<string>`net_minor::text`.as('net_minor'),
      ])
      .$if(days.from !== undefined, (query) => query.where('day', '>=', sql<Date>`${days.from}::date`))
      .where('day', '<=', sql<Date>`${days.to}::date`)
      .orderBy('day')
      .orderBy('currency')
      .execute();
  });
  return rows.map((row) => ({
    day: row.day_text,
    currency: row.currency?.trim() ?? null,
    transactions: row.transactions,
    payments: row.payments,
    refunds: row.refunds,
    paidMinor: row.paid_minor,
    refundedMinor: row.refunded_minor,
    feesMinor: row.fees_minor,
    netMinor: row.net_minor,
  }));
}
