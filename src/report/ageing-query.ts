import { sql, type Kysely } from 'kysely';
import type { Schema } from '../db/schema.ts';
import { acknowledgedSql } from './acknowledgement-sql.ts';
import { ageBucketSql, atRiskMinorSql } from './exception-money-sql.ts';
import { NOT_EXCEPTIONS, type AgeingCell } from './run-report.ts';
import { runVerdicts } from './run-verdicts.ts';

/**
 * The run's open exceptions by status, currency and age of their order at the run's as_of: what
 * reporting.exception_ageing shows of the current exceptions now, for this run as it was. One walk of the run's
 * verdicts; what comes back is bounded by statuses, currencies and the five buckets.
 */
export async function loadAgeing(db: Kysely<Schema>, runId: string): Promise<AgeingCell[]> {
  const rows = await db
    .selectFrom(await runVerdicts(db, runId))
    .innerJoin('recon.reconciliation_runs as run', (join) => join.on('run.run_id', '=', runId))
    .leftJoin('recon.orders as o', (join) => join.onRef('o.order_id', '=', 'v.order_id').on('v.known_order', '=', true))
    .select([
      'v.status',
      acknowledgedSql.as('acknowledged'),
      'v.currency',
      ageBucketSql.as('order_age_bucket'),
      sql<number>`count(*)::int`.as('exceptions'),
      sql<string>`coalesce(sum((${atRiskMinorSql})::bigint), 0)::text`.as('at_risk_minor'),
      sql<number>`count(*) FILTER (WHERE ${atRiskMinorSql} IS NULL)::int`.as('at_risk_unknown'),
    ])
    .where('v.status', 'not in', NOT_EXCEPTIONS)
    .groupBy(['v.status', sql`2`, 'v.currency', sql`4`])
    .orderBy('v.status')
    .orderBy(sql`2`)
    .orderBy('v.currency')
    .execute();
  return rows.map((row) => ({
    status: row.status,
    acknowledged: row.acknowledged,
    currency: row.currency?.trim() ?? null,
    orderAgeBucket: row.order_age_bucket,
    exceptions: row.exceptions,
    atRiskMinor: row.at_risk_minor,
    atRiskUnknown: row.at_risk_unknown,
  }));
}
