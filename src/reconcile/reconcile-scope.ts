import type { RunKind, RunScopeJson } from '../db/schema.ts';

/**
 * Which orders a run reconciles. `all` also gives a verdict to every ORDERID that has succeeded transactions but
 * no order (unknown_order), and so does `orders` for an ORDERID it names; `created_since` judges orders only.
 */
export type ReconcileScope =
  | { readonly kind: 'all' }
  | { readonly kind: 'orders'; readonly orderIds: readonly string[] }
  | { readonly kind: 'created_since'; readonly since: Date };

/** What started a run: the nightly run it reconciles, a backfill, or someone at a terminal (recon reconcile). */
export type RunOrigin =
  | { readonly kind: 'nightly'; readonly nightlyRunId: string; readonly runDate: string }
  | { readonly kind: Exclude<RunKind, 'nightly'> };

/** As stored: a named scope keeps its count here, its ORDERIDs elsewhere (recon.run_scope_orders). */
export function scopeToJson(scope: ReconcileScope): RunScopeJson {
  switch (scope.kind) {
    case 'all':
      return { kind: 'all' };
    case 'orders':
      return { kind: 'orders', count: new Set(scope.orderIds).size };
    case 'created_since':
      return { kind: 'created_since', since: scope.since.toISOString() };
  }
}

/**
 * A run's scope in a few words, never its ORDERIDs: 'nightly run of 2026-11-26: 19,999 orders', 'all orders and
 * unknown ORDERIDs', 'orders created since 2026-11-01T00:00:00.000Z', '3 orders'.
 */
export function describeRun(origin: RunOrigin, scope: RunScopeJson): string {
  switch (scope.kind) {
    case 'all':
      return 'all orders and unknown ORDERIDs';
    case 'created_since':
      return `orders created since ${scope.since}`;
    case 'orders': {
      const orders = `${scope.count.toLocaleString('en-US')} order${scope.count === 1 ? '' : 's'}`;
      return origin.kind === 'nightly' ? `nightly run of ${origin.runDate}: ${orders}` : orders;
    }
  }
}
