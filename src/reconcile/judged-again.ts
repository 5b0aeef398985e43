import type { Kysely } from 'kysely';
import type { Schema } from '../db/schema.ts';
import type { ReconcileScope } from './reconcile-scope.ts';
import { verdictInScope } from './verdicts-in-scope.ts';

/**
 * A run that judged an order and found its verdict unchanged moves that verdict's lifecycle on (new becomes
 * persisting, resolved becomes nothing) without writing a version: it marks the current versions it moves, once,
 * with itself. The views read the lifecycle from the mark (sql/recon/current_verdicts.sql). Run in the transaction
 * that finishes the run, so that a run that never finishes marks nothing. A run over all orders judged every current
 * verdict, whatever it computed again.
 */
export async function markJudgedAgain(db: Kysely<Schema>, runId: string, scope: ReconcileScope): Promise<void> {
  await db
    .updateTable('recon.verdicts as v')
    .set({ rejudged_run_id: runId })
    .where('v.rejudged_run_id', 'is', null)
    // What the run's own verdict of it would read differently: an exception it saw first, or a resolution.
    .where('v.lifecycle', 'in', ['new', 'resolved'])
    .where('v.run_id', '<', runId)
    .where(verdictInScope(scope))
    .execute();
}
