import { sql, type Kysely } from 'kysely';
import type { Schema } from '../db/schema.ts';
import type { StatusTotal } from './run-report.ts';

/**
 * The run's bridge by currency and status, with the money each status puts at risk, from reporting.run_status_totals
 * as an accountant reads it. The view counts a verdict without a currency under XXX, as the bridge does
 * (recon.run_totals): the parts meet their total.
 */
export async function loadStatusTotals(db: Kysely<Schema>, runId: string): Promise<StatusTotal[]> {
  const rows = await db
    .selectFrom('reporting.run_status_totals')
    .select([
      'currency',
      'status',
      sql<number>`sum(verdicts)::int`.as('verdicts'),
      sql<string>`sum(expected_minor)::text`.as('expected_minor'),
      sql<string>`sum(settled_minor)::text`.as('settled_minor'),
      sql<string>`sum(difference_minor)::text`.as('difference_minor'),
      sql<string>`sum(at_risk_minor)::text`.as('at_risk_minor'),
      sql<number>`sum(at_risk_unknown)::int`.as('at_risk_unknown'),
    ])
    .where('run_id', '=', runId)
    .groupBy(['currency', 'status'])
    .orderBy('currency')
    .orderBy('status')
    .execute();
  return rows.map((row) => ({
    currency: row.currency.trim(),
    status: row.status,
    verdicts: row.verdicts,
    expectedMinor: row.expected_minor,
    settledMinor: row.settled_minor,
    differenceMinor: row.difference_minor,
    atRiskMinor: row.at_risk_minor,
    atRiskUnknown: row.at_risk_unknown,
  }));
}
