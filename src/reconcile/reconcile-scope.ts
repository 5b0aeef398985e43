import type { RunScopeJson } from '../db/schema.ts';

/**
 * Which orders a run reconciles. `all` also gives a verdict to every ORDERID that has succeeded transactions but
 * no order (unknown_order); the other scopes judge the orders they name or select.
 */
export type ReconcileScope =
  | { readonly kind: 'all' }
  | { readonly kind: 'orders'; readonly orderIds: readonly string[] }
  | { readonly kind: 'created_since'; readonly since: Date };

export function scopeToJson(scope: ReconcileScope): RunScopeJson {
  switch (scope.kind) {
    case 'all':
      return { kind: 'all' };
    case 'orders':
      return { kind: 'orders', order_ids: [...new Set(scope.orderIds)] };
    case 'created_since':
      return { kind: 'created_since', since: scope.since.toISOString() };
  }
}
