import { sql } from 'kysely';
import type { AgeBucket } from './run-report.ts';

/**
 * What a report says of an exception's money and age, over a run's verdicts `v`, its run `run` and its order `o`
 * (left-joined: null for an unknown ORDERID). The money at risk is the one written with the verdict, as the views
 * read it; the age counts from the order's creation to the run's as_of, not to now, so a past run's report reads
 * the same however late it is made.
 */
export const atRiskMinorSql = sql<string | null>`v.at_risk_minor::text`;

export const orderAgeDaysSql = sql<number | null>`floor(extract(epoch FROM run.as_of - o.created_at) / 86400)::integer`;

/** The buckets of reporting.exception_ageing (order_age_bucket), by the same bounds and words. */
export const ageBucketSql = sql<AgeBucket>`CASE
  WHEN o.created_at IS NULL THEN 'no order'
  WHEN ${orderAgeDaysSql} <= 3 THEN '0-3 days'
  WHEN ${orderAgeDaysSql} <= 7 THEN '4-7 days'
  WHEN ${orderAgeDaysSql} <= 30 THEN '8-30 days'
  ELSE 'over 30 days' END`;
