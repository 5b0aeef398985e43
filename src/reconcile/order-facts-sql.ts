import { sql, type RawBuilder } from 'kysely';
import type { ReconcileScope } from './reconcile-scope.ts';

/**
 * The facts of every order in a run's scope, as the CTEs `scoped` (the orders), `sums` (per ORDERID, one pass over
 * its transactions) and `conflicts`, for the verdict statement to join. Set-based: one aggregate over the whole
 * scope, never a query per order. S is an order's transactions with EXECCODE 0000.
 *
 * - The sums are of every transaction of the ORDERID, whatever its currency: one pass over recon.transactions alone,
 *   like a plain GROUP BY. The few orders with a succeeded transaction in another currency (first_currency or
 *   last_currency differs from the order's) are currency_mismatch verdicts, and the verdict statement sums their
 *   money again in the order's currency alone, so that no amount leaks into another currency's bridge.
 * - Operation types are compared trimmed and lower-cased, as the service may write them either way.
 * - Instalment SCHEDULE positions of the money (succeeded payments and captures; an authorization shows the plan's
 *   first position too) must be 1..n, each once. A bit mask checks that (n = the highest position and the mask is
 *   bits 1..n) exactly and cheaply for a million orders; only the irregular ones get the precise warning.
 * - Conflicts: a valid notification and the export row of the same transaction, both final (not 0002/0003),
 *   that disagree on EXECCODE or AMOUNT. A bad HASH is never evidence.
 */
export function orderFactsCtes(scope: ReconcileScope): RawBuilder<unknown> {
  const filter = scopeFilter(scope);
  return sql`scoped AS (
  SELECT o.order_id, o.amount_minor, o.currency AS order_currency, o.status, o.refunded_minor, o.payment_method, o.created_at
  FROM recon.orders o
  WHERE ${filter.orders}
), sums AS (
  SELECT order_id,
    count(*)::integer AS tx_count,
    count(*) FILTER (WHERE ok)::integer AS succeeded_count,
    coalesce(sum(amount_minor) FILTER (WHERE ok AND op IN ('payment', 'capture')), 0)::bigint AS paid,
    coalesce(sum(amount_minor) FILTER (WHERE ok AND op = 'refund'), 0)::bigint AS refunded,
    coalesce(sum(amount_minor) FILTER (WHERE ok AND op = 'authorization'), 0)::bigint AS authorized,
    count(*) FILTER (WHERE ok AND op IN ('payment', 'capture'))::integer AS payment_count,
    count(*) FILTER (WHERE ok AND op = 'capture')::integer AS capture_count,
    count(*) FILTER (WHERE ok AND op = 'authorization')::integer AS authorization_count,
    min(occurred_at) FILTER (WHERE ok AND op = 'authorization') AS first_authorized_at,
    max(occurred_at) FILTER (WHERE exec_code = '0003' AND op = 'authorization') AS latest_approval_wait_at,
    min(currency) FILTER (WHERE ok) AS first_currency,
    max(currency) FILTER (WHERE ok) AS last_currency,
    array_agg(transaction_id) AS transaction_ids,
    array_agg(transaction_id) FILTER (WHERE exec_code = '0002') AS abandoned_ids,
    count(*) FILTER (WHERE ok AND op IN ('payment', 'capture') AND schedule_index IS NOT NULL)::integer AS scheduled_count,
    max(schedule_index) FILTER (WHERE ok AND op IN ('payment', 'capture')) AS last_position,
    bit_or(CASE WHEN ok AND op IN ('payment', 'capture') AND schedule_index BETWEEN 1 AND 62 THEN 1::bigint << schedule_index END) AS position_mask
  FROM (
    -- OFFSET 0 keeps this a subquery of its own: op and ok are computed once per transaction instead of once per
    -- aggregate that filters on them.
    SELECT t.order_id, t.transaction_id, lower(btrim(t.operation_type)) AS op, t.exec_code, t.exec_code = '0000' AS ok,
      t.amount_minor, t.currency, t.occurred_at, t.schedule_index
    FROM recon.transactions t
    WHERE t.order_id IS NOT NULL AND ${filter.transactions}
    OFFSET 0
  ) tx
  GROUP BY order_id
), conflicts AS (
  SELECT t.order_id, jsonb_agg(DISTINCT jsonb_build_object(
      'transaction_id', t.transaction_id,
      'export_exec_code', t.exec_code,
      'notified_exec_code', n.exec_code,
      'export_amount_minor', t.amount_minor::text,
      'notified_amount_minor', n.amount_minor::text,
      'notification_id', n.notification_id::text
    )) AS conflicts
  FROM recon.notifications n
  JOIN recon.transactions t ON t.transaction_id = n.transaction_id
  WHERE n.hash_valid
    AND n.exec_code NOT IN ('0002', '0003') AND t.exec_code NOT IN ('0002', '0003')
    AND (n.exec_code <> t.exec_code OR n.amount_minor <> t.amount_minor)
    AND ${filter.transactions}
  GROUP BY t.order_id
)`;
}

/**
 * Which ORDERIDs a scope judges: its orders, and (except for a creation-date scope, since an unknown ORDERID has
 * no creation date) the ORDERIDs among its transactions that have a succeeded one but no order. The transaction
 * filter sees `t` (recon.transactions).
 */
export function scopeFilter(scope: ReconcileScope): {
  orders: RawBuilder<unknown>;
  transactions: RawBuilder<unknown>;
  unknownOrders: boolean;
} {
  switch (scope.kind) {
    case 'all':
      return { orders: sql`true`, transactions: sql`true`, unknownOrders: true };
    case 'orders': {
      const ids = sql`${[...new Set(scope.orderIds)]}::text[]`;
      return { orders: sql`o.order_id = ANY (${ids})`, transactions: sql`t.order_id = ANY (${ids})`, unknownOrders: true };
    }
    case 'created_since': {
      const since = sql`${scope.since.toISOString()}::timestamptz`;
      return {
        orders: sql`o.created_at >= ${since}`,
        transactions: sql`t.order_id IN (SELECT o.order_id FROM recon.orders o WHERE o.created_at >= ${since})`,
        unknownOrders: false,
      };
    }
  }
}
