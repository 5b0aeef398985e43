import { sql, type RawBuilder } from 'kysely';
import type { ReconcileScope } from './reconcile-scope.ts';

/** The temporary table of one run's facts: one row per order or unknown ORDERID in scope. */
export const ORDER_FACTS_TABLE = 'recon_order_facts';

/**
 * The ids a run judges, with whether each is an order. An ORDERID without an order is in scope only when it has a
 * succeeded transaction (S is not empty): a failed attempt alone is nobody's money.
 */
function scopeIds(scope: ReconcileScope): RawBuilder<unknown> {
  const unknownIds = (filter: RawBuilder<unknown>) => sql`SELECT DISTINCT t.order_id, false
    FROM recon.transactions t
    WHERE t.exec_code = '0000' AND t.order_id IS NOT NULL AND ${filter}
      AND NOT EXISTS (SELECT 1 FROM recon.orders o WHERE o.order_id = t.order_id)`;
  switch (scope.kind) {
    case 'all':
      return sql`SELECT order_id, true FROM recon.orders UNION ALL ${unknownIds(sql`true`)}`;
    case 'orders': {
      const ids = [...new Set(scope.orderIds)];
      return sql`SELECT order_id, true FROM recon.orders WHERE order_id = ANY (${ids}::text[])
        UNION ALL ${unknownIds(sql`t.order_id = ANY (${ids}::text[])`)}`;
    }
    case 'created_since':
      return sql`SELECT order_id, true FROM recon.orders WHERE created_at >= ${scope.since.toISOString()}::timestamptz`;
  }
}

/**
 * Everything the rules need about each order in scope, in one pass over its transactions (set-based: one
 * aggregate over the scope, never a query per order). S is an order's transactions with EXECCODE 0000.
 *
 * - Sums of money count only transactions in the order's currency (or without one): a transaction in another
 *   currency makes the order a currency_mismatch, and its amount must not leak into a bridge of another currency.
 *   An unknown ORDERID has no currency of its own: all of its S counts.
 * - Operation types are compared trimmed and lower-cased; the explanation shows them as the export wrote them.
 * - Amounts inside jsonb are strings of minor units: a JSON number would reach Node as a float.
 * - Conflicts: a valid notification and the export row of the same transaction, both final (not 0002/0003),
 *   that disagree on EXECCODE or AMOUNT. A bad HASH is never evidence.
 */
export function createOrderFactsSql(scope: ReconcileScope): RawBuilder<unknown> {
  return sql`CREATE TEMP TABLE ${sql.raw(ORDER_FACTS_TABLE)} ON COMMIT DROP AS
WITH scope (order_id, known) AS (
  ${scopeIds(scope)}
), scoped AS (
  SELECT s.order_id, s.known, o.amount_minor, o.currency AS order_currency, o.status, o.refunded_minor,
    o.payment_method, o.created_at
  FROM scope s LEFT JOIN recon.orders o ON o.order_id = s.order_id AND s.known
), tx AS (
  SELECT t.order_id, t.transaction_id, t.operation_type, lower(btrim(t.operation_type)) AS op, t.exec_code,
    t.exec_code = '0000' AS ok, t.amount_minor, t.currency, t.occurred_at, t.schedule_index, t.schedule_count,
    t.file_id, t.entry, t.line,
    (t.currency IS NULL OR s.order_currency IS NULL OR t.currency = s.order_currency) AS in_currency
  FROM scoped s JOIN recon.transactions t ON t.order_id = s.order_id
), sums AS (
  SELECT tx.order_id,
    count(*)::integer AS tx_count,
    count(*) FILTER (WHERE ok)::integer AS succeeded_count,
    coalesce(sum(amount_minor) FILTER (WHERE ok AND op IN ('payment', 'capture') AND in_currency), 0)::bigint AS paid,
    coalesce(sum(amount_minor) FILTER (WHERE ok AND op = 'refund' AND in_currency), 0)::bigint AS refunded,
    coalesce(sum(amount_minor) FILTER (WHERE ok AND op = 'authorization' AND in_currency), 0)::bigint AS authorized,
    count(*) FILTER (WHERE ok AND op IN ('payment', 'capture'))::integer AS payment_count,
    count(*) FILTER (WHERE ok AND op = 'capture')::integer AS capture_count,
    count(*) FILTER (WHERE ok AND op = 'authorization')::integer AS authorization_count,
    min(occurred_at) FILTER (WHERE ok AND op = 'authorization') AS first_authorized_at,
    max(occurred_at) FILTER (WHERE exec_code = '0003' AND op = 'authorization') AS latest_approval_wait_at,
    array_agg(DISTINCT currency) FILTER (WHERE ok AND NOT in_currency) AS other_currencies,
    array_agg(DISTINCT currency) FILTER (WHERE ok AND currency IS NOT NULL) AS succeeded_currencies,
    array_agg(transaction_id ORDER BY occurred_at, transaction_id) FILTER (WHERE ok AND op IN ('payment', 'capture')) AS payment_ids,
    array_agg(transaction_id ORDER BY occurred_at, transaction_id) FILTER (WHERE exec_code = '0002') AS abandoned_ids,
    array_agg(schedule_index ORDER BY schedule_index) FILTER (WHERE ok AND schedule_index IS NOT NULL) AS schedule_positions,
    jsonb_agg(jsonb_build_object(
      'transaction_id', transaction_id,
      'operation_type', operation_type,
      'exec_code', exec_code,
      'amount_minor', amount_minor::text,
      'currency', currency,
      'occurred_at', occurred_at,
      'source_file', f.name,
      'source_entry', tx.entry,
      'source_line', tx.line
    ) ORDER BY occurred_at, transaction_id) AS transactions
  FROM tx LEFT JOIN recon.files f ON f.file_id = tx.file_id
  GROUP BY tx.order_id
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
  JOIN scoped s ON s.order_id = t.order_id
  WHERE n.hash_valid
    AND n.exec_code NOT IN ('0002', '0003') AND t.exec_code NOT IN ('0002', '0003')
    AND (n.exec_code <> t.exec_code OR n.amount_minor <> t.amount_minor)
  GROUP BY t.order_id
)
SELECT s.*,
  coalesce(x.tx_count, 0) AS tx_count,
  coalesce(x.succeeded_count, 0) AS succeeded_count,
  coalesce(x.paid, 0) AS paid,
  coalesce(x.refunded, 0) AS refunded,
  coalesce(x.authorized, 0) AS authorized,
  coalesce(x.payment_count, 0) AS payment_count,
  coalesce(x.capture_count, 0) AS capture_count,
  coalesce(x.authorization_count, 0) AS authorization_count,
  x.first_authorized_at, x.latest_approval_wait_at, x.other_currencies, x.succeeded_currencies,
  x.payment_ids, x.abandoned_ids, x.schedule_positions,
  coalesce(x.transactions, '[]'::jsonb) AS transactions,
  c.conflicts
FROM scoped s
LEFT JOIN sums x ON x.order_id = s.order_id
LEFT JOIN conflicts c ON c.order_id = s.order_id`;
}
