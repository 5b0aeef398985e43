import { sql, type Kysely } from 'kysely';
import type { Schema } from '../db/schema.ts';
import type { ReconcileScope } from './reconcile-scope.ts';

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
    .where(inScope(scope))
    .execute();
}

function inScope(scope: ReconcileScope) {
  switch (scope.kind) {
    case 'all':
      return sql<boolean>`true`;
    case 'orders':
      return sql<boolean>`v.order_id = ANY (${[...new Set(scope.orderIds)]}::text[])`;
    case 'created_since':
      return sql<boolean>`v.known_order AND EXISTS (SELECT 1 FROM recon.orders o
        WHERE o.order_id = v.order_id AND o.created_at >= ${scope.since.toISOString()}::timestamptz)`;
  }
}
