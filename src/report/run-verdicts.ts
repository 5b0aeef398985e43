import { sql, type Kysely } from 'kysely';
import type { Schema } from '../db/schema.ts';
import { lifecycleAtSql } from '../reconcile/lifecycle-sql.ts';

/**
 * The verdicts of one run, as the run gave them, however many runs came after: the versions that held at the run
 * (from their run up to, not including, the run that replaced them), within the run's scope. A run over all
 * orders judged every current verdict (an ORDERID it no longer judged left the current set in that run); a run over
 * a creation date, its known orders created since; a run over named orders, those (recon.run_scope_orders); a
 * nightly run, the ORDERIDs its first export requests asked about. A run cut short, only the verdicts it wrote.
 * Lifecycles are as of the run.
 */
export async function runVerdicts(db: Kysely<Schema>, runId: string) {
  const run = await db
    .selectFrom('recon.reconciliation_runs')
    .select(['kind', 'scope', 'finished_at', sql<string | null>`nightly_run_id::text`.as('nightly_run_id')])
    .where('run_id', '=', runId)
    .executeTakeFirst();
  const id = sql`${runId}::bigint`;
  const scope = run?.scope;
  return (
    db
      .selectFrom('recon.verdict_versions as v')
      .select([
        'v.run_id',
        'v.order_id',
        'v.known_order',
        'v.status',
        lifecycleAtSql('v', id).as('lifecycle'),
        'v.first_seen_run_id',
        'v.first_seen_at',
        'v.expected_minor',
        'v.settled_minor',
        'v.delta_minor',
        'v.currency',
        'v.transaction_ids',
        'v.warnings',
        'v.explanation',
        'v.at_risk_minor',
        'v.until_run_id',
      ])
      // A run cut short counts only what it wrote.
      .where(
        run?.finished_at === null
          ? sql<boolean>`v.run_id = ${id}`
          : sql<boolean>`v.run_id <= ${id} AND (v.until_run_id IS NULL OR v.until_run_id > ${id})`,
      )
      .where(
        scope === undefined
          ? sql<boolean>`false`
          : scope.kind === 'all'
            ? sql<boolean>`true`
            : scope.kind === 'created_since'
              ? sql<boolean>`v.known_order AND EXISTS (SELECT 1 FROM recon.orders o
                WHERE o.order_id = v.order_id AND o.created_at >= ${scope.since}::timestamptz)`
              : run?.kind === 'nightly'
                ? sql<boolean>`v.order_id IN (SELECT unnest(q.order_ids) FROM recon.export_requests q
                  WHERE q.nightly_run_id = ${run.nightly_run_id}::bigint AND q.attempt = 1)`
                : sql<boolean>`v.order_id IN (SELECT s.order_id FROM recon.run_scope_orders s WHERE s.run_id = ${id})`,
      )
      .as('v')
  );
}
