import { sql, type RawBuilder } from 'kysely';
import type { ReconcileScope } from './reconcile-scope.ts';

/**
 * Whether the current verdict `v` (recon.verdicts) is one of a scope's: once a run of that scope has written its
 * verdicts, these are all the run's verdicts, written by it or holding from before.
 */
export function verdictInScope(scope: ReconcileScope): RawBuilder<boolean> {
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
