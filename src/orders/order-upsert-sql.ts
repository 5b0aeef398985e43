import { ORDER_STAGING_TABLE } from './order-staging.ts';

/**
 * The set-based statements that move one import's staged rows into recon, inside its transaction.
 *
 * The upsert keys on order_id. The last staged row of an order wins (a csv that lists an order twice: its later
 * line; a query that returns it twice: its later row); the earlier ones are superseded. An order whose values
 * all equal the stored ones is left alone, so a re-import writes nothing and its lineage (import_id, line) keeps
 * pointing at the import that last changed it; `xmax = 0` in RETURNING tells an insert from an update.
 * Unlike ingest, orders are always deduplicated first: one sort per import, and the counts stay exact even when
 * a repeated order leaves the stored row unchanged (a case the direct form cannot see).
 *
 * Parameters: $1 import_id, $2 whether `line` is a csv line worth keeping as lineage (false for a database sync,
 * whose positions mean nothing once the query runs again). Returns one row: distinct_orders, inserted, updated.
 */
export const UPSERT_STAGED_ORDERS_SQL = `WITH latest AS (
  SELECT DISTINCT ON (order_id) order_id, amount_minor, currency, status, refunded_minor, payment_method, created_at, line
  FROM ${ORDER_STAGING_TABLE}
  WHERE reject_reason IS NULL
  ORDER BY order_id, line DESC
), written AS (
  INSERT INTO recon.orders AS o (order_id, amount_minor, currency, status, refunded_minor, payment_method, created_at, import_id, line)
  SELECT order_id, amount_minor, currency, status, refunded_minor, payment_method, created_at, $1, CASE WHEN $2::boolean THEN line END
  FROM latest
  ON CONFLICT (order_id) DO UPDATE SET
    amount_minor = excluded.amount_minor,
    currency = excluded.currency,
    status = excluded.status,
    refunded_minor = excluded.refunded_minor,
    payment_method = excluded.payment_method,
    created_at = excluded.created_at,
    import_id = excluded.import_id,
    line = excluded.line,
    updated_at = now()
  WHERE (o.amount_minor, o.currency, o.status, o.refunded_minor, o.payment_method, o.created_at)
    IS DISTINCT FROM (excluded.amount_minor, excluded.currency, excluded.status, excluded.refunded_minor, excluded.payment_method, excluded.created_at)
  RETURNING o.xmax = 0 AS inserted
)
SELECT (SELECT count(*) FROM latest)::integer AS distinct_orders,
  (count(*) FILTER (WHERE inserted))::integer AS inserted,
  (count(*) FILTER (WHERE NOT inserted))::integer AS updated
FROM written`;

export interface UpsertedOrderCounts {
  distinct_orders: number;
  inserted: number;
  updated: number;
}

/** Moves the staged rejected rows into recon.rejected_order_rows. $1 import_id. */
export const INSERT_REJECTED_ORDER_ROWS_SQL = `INSERT INTO recon.rejected_order_rows (import_id, line, raw, reason)
SELECT $1, line, raw, reject_reason
FROM ${ORDER_STAGING_TABLE}
WHERE reject_reason IS NOT NULL
ORDER BY line`;
