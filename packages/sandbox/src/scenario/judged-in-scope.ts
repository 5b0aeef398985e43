import type { RunScope } from './verdict-vocabulary.ts';
import type { MerchantOrder } from './expected-verdict.ts';

/**
 * Whether a run of `scope` judges the ORDERID, as recon selects it (scopeFilter, src/reconcile/order-facts-sql.ts):
 * `all` every order and every ORDERID without one; `orders` the ORDERIDs it lists, with an order or not;
 * `created_since` the orders created since, never an ORDERID without one (it has no creation date). `order` is the
 * merchant's order of that ORDERID, undefined when the merchant's books lack it.
 */
export function judgedInScope(scope: RunScope, orderId: string, order: MerchantOrder | undefined): boolean {
  switch (scope.kind) {
    case 'all':
      return true;
    case 'orders':
      return scope.orderIds.includes(orderId);
    case 'created_since':
      return order !== undefined && order.createdAt.getTime() >= scope.since.getTime();
  }
}
