import type { Kysely } from 'kysely';
import type { Schema } from '../db/schema.ts';
import { latestRunOverAllSql } from './latest-run-over-all-sql.ts';
import type { ReconcileScope } from './reconcile-scope.ts';
import { verdictInScope } from './verdicts-in-scope.ts';

/**
 * A run that judged an order and found its verdict unchanged moves that verdict's lifecycle on (new becomes
 * persisting, resolved becomes nothing) without writing a version: it marks the current versions it moves, once,
 * with itself. The views read the lifecycle from the mark (sql/recon/current_verdicts.sql). Run in the transaction
 * that finishes the run, so that a run that never finishes marks nothing.
 *
 * A run over all orders marks nothing: it judged every current verdict older than it, which the views read from the
 * run itself (latestRunOverAllSql). Its marks were a new version of every exception it saw first the run before, an
 * eighth of the verdicts, the widest rows, each on a new page with its entries in every index: the second of ten
 * runs grew the verdicts by a quarter of what the first wrote, and the table never shrank back. A narrower run
 * likewise leaves unmarked the verdicts a run over all orders has judged again already.
 */
export async function markJudgedAgain(db: Kysely<Schema>, runId: string, scope: ReconcileScope): Promise<void> {
  if (scope.kind === 'all') return;
  await unmarkedMovedBy(db, runId)
    .where('v.run_id', '>=', latestRunOverAllSql())
    .where(verdictInScope(scope))
    .execute();
}

/**
 * Writes the marks a finished run over all orders stood for, every version it judged again: before its row is pruned
 * (src/retention/prune-runs.ts), after which the views could no longer read them from it.
 */
export async function markJudgedByRunOverAll(db: Kysely<Schema>, runId: string): Promise<void> {
  await unmarkedMovedBy(db, runId).execute();
}

/** The mark of `runId` on the current versions before it whose lifecycle it moves, not marked yet. */
function unmarkedMovedBy(db: Kysely<Schema>, runId: string) {
  return (
    db
      .updateTable('recon.verdicts as v')
      .set({ rejudged_run_id: runId })
      .where('v.rejudged_run_id', 'is', null)
      // What the run's own verdict of it would read differently: an exception it saw first, or a resolution.
      .where('v.lifecycle', 'in', ['new', 'resolved'])
      .where('v.run_id', '<', runId)
  );
}
