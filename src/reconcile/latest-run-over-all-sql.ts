import { sql, type RawBuilder } from 'kysely';

/**
 * The latest finished run over all orders, 0 when none: it judged every current verdict older than it, so a verdict
 * whose run_id is below it was judged again without a mark of its own (src/reconcile/judged-again.ts). Read from the
 * runs, through their index of finished runs over all orders (migration 0042); sql/recon/current_verdicts.sql says
 * the same in SQL.
 */
export function latestRunOverAllSql(): RawBuilder<string> {
  return sql<string>`(SELECT coalesce(max(r.run_id), 0) FROM recon.reconciliation_runs r
    WHERE r.finished_at IS NOT NULL AND r.scope ->> 'kind' = 'all')`;
}
