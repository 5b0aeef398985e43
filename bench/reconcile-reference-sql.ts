/**
 * The reconciliation benchmark's reference (docs/benchmarks.md): one plain SQL statement that joins the orders to
 * their per-order sums of succeeded transactions (payments and captures minus refunds) and writes
 * `order_id, settled, settled = expected` into a new table. Expected follows docs/reconcile.md: `paid` -> amount,
 * `partially_refunded` -> amount - refunded, every other status -> 0. No rule, no explanation, no history:
 * the floor of what reading both sides and writing one row per order costs on this server.
 */
export const REFERENCE_TABLE = 'bench_reference';

export const REFERENCE_RECONCILE = `
CREATE TABLE ${REFERENCE_TABLE} AS
SELECT o.order_id,
       coalesce(s.settled, 0) AS settled,
       coalesce(s.settled, 0) = CASE o.status
                                  WHEN 'paid' THEN o.amount_minor
                                  WHEN 'partially_refunded' THEN o.amount_minor - o.refunded_minor
                                  ELSE 0
                                END AS settled_as_expected
FROM recon.orders o
LEFT JOIN (
  SELECT order_id,
         sum(CASE WHEN operation_type = 'refund' THEN -amount_minor ELSE amount_minor END) AS settled
  FROM recon.transactions
  WHERE exec_code = '0000' AND operation_type IN ('payment', 'capture', 'refund')
  GROUP BY order_id
) s ON s.order_id = o.order_id`;
