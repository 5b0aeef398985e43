-- From the money a run's orders received to its bridge's settled (reporting.received_to_bridge), out of per-run
-- totals written when the run finishes: a few rows a run, read at no cost whatever its size.

-- The fees of the money each account received for a run's orders, beside it. The runs finished before are written
-- again with them, their verdicts as they gave them and the transactions as they are now (as 0033 wrote them).
ALTER TABLE recon.run_account_totals ADD COLUMN fees_minor bigint;
DELETE FROM recon.run_account_totals;
INSERT INTO recon.run_account_totals (run_id, identifier, currency, orders, transactions, paid_minor, refunded_minor,
  fees_minor)
SELECT run_id, identifier, currency, count(*), sum(transactions), coalesce(sum(paid), 0), coalesce(sum(refunded), 0),
  coalesce(sum(fees), 0)
FROM (
  SELECT r.run_id, t.order_id, t.identifier, t.currency, count(*) AS transactions,
    sum(t.amount_minor) FILTER (WHERE lower(btrim(t.operation_type)) IN ('payment', 'capture')) AS paid,
    sum(t.amount_minor) FILTER (WHERE lower(btrim(t.operation_type)) = 'refund') AS refunded,
    sum(t.fees_minor) AS fees
  FROM recon.reconciliation_runs r
  JOIN (SELECT x.run_id, x.order_id, x.known_order, x.transaction_ids, NULL::bigint AS until_run_id FROM recon.verdicts x
        UNION ALL
        SELECT h.run_id, h.order_id, h.known_order, h.transaction_ids, h.until_run_id FROM recon.verdict_history h) v
    ON v.run_id <= r.run_id AND (v.until_run_id IS NULL OR v.until_run_id > r.run_id)
  CROSS JOIN LATERAL unnest(v.transaction_ids) AS considered (transaction_id)
  JOIN recon.transactions t ON t.transaction_id = considered.transaction_id AND t.exec_code = '0000'
  WHERE r.finished_at IS NOT NULL AND r.pruned_at IS NULL AND (
    r.scope ->> 'kind' = 'all'
    OR (r.scope ->> 'kind' = 'created_since' AND v.known_order AND EXISTS (SELECT 1 FROM recon.orders o
        WHERE o.order_id = v.order_id AND o.created_at >= (r.scope ->> 'since')::timestamptz))
    OR (r.kind = 'nightly' AND v.order_id IN (SELECT unnest(q.order_ids) FROM recon.export_requests q
        WHERE q.nightly_run_id = r.nightly_run_id AND q.attempt = 1))
    OR (r.kind <> 'nightly' AND r.scope ->> 'kind' = 'orders' AND v.order_id IN (SELECT s.order_id
        FROM recon.run_scope_orders s WHERE s.run_id = r.run_id)))
  GROUP BY r.run_id, t.order_id, t.identifier, t.currency
) per_order
GROUP BY run_id, identifier, currency;
ALTER TABLE recon.run_account_totals ALTER COLUMN fees_minor SET NOT NULL;

-- The money of a run's verdicts its bridge does not count in the currency it was paid in: currency_mismatch orders'
-- money in another currency (in no bridge), unknown ORDERIDs' money in another currency than their first
-- transaction's (counted in that one), transactions without a CURRENCY (counted in their order's). currency: the
-- transactions' (null for none); verdict_currency: the bridge the verdict is in (XXX when it has no currency).
CREATE TABLE recon.run_currency_moves (
  run_id           bigint NOT NULL,
  currency         char(3),
  verdict_currency char(3) NOT NULL,
  known_order      boolean NOT NULL,
  orders           integer NOT NULL,
  transactions     integer NOT NULL,
  paid_minor       bigint NOT NULL,
  refunded_minor   bigint NOT NULL
);
CREATE INDEX run_currency_moves_run ON recon.run_currency_moves (run_id);

-- The succeeded transactions without a currency, a handful: read by a finishing run without a walk of all of them.
CREATE INDEX transactions_without_currency_idx ON recon.transactions (order_id) WHERE currency IS NULL AND exec_code = '0000';

-- The runs finished before, as src/reconcile/run-currency-moves.ts writes a run's, with the transactions as they are now.
INSERT INTO recon.run_currency_moves (run_id, currency, verdict_currency, known_order, orders, transactions,
  paid_minor, refunded_minor)
SELECT run_id, currency, verdict_currency, known_order, count(DISTINCT order_id), count(*),
  coalesce(sum(amount_minor) FILTER (WHERE op IN ('payment', 'capture')), 0),
  coalesce(sum(amount_minor) FILTER (WHERE op = 'refund'), 0)
FROM (
  SELECT r.run_id, v.order_id, v.known_order, coalesce(v.currency, 'XXX') AS verdict_currency, t.currency,
    t.amount_minor, lower(btrim(t.operation_type)) AS op
  FROM recon.reconciliation_runs r
  JOIN (SELECT x.run_id, x.order_id, x.known_order, x.status, x.currency, x.transaction_ids, NULL::bigint AS until_run_id
        FROM recon.verdicts x
        UNION ALL
        SELECT h.run_id, h.order_id, h.known_order, h.status, h.currency, h.transaction_ids, h.until_run_id
        FROM recon.verdict_history h) v
    ON v.run_id <= r.run_id AND (v.until_run_id IS NULL OR v.until_run_id > r.run_id)
  JOIN recon.transactions t ON t.order_id = v.order_id AND t.transaction_id = ANY (v.transaction_ids)
    AND t.exec_code = '0000'
  WHERE r.finished_at IS NOT NULL AND r.pruned_at IS NULL
    AND ((v.status IN ('currency_mismatch', 'unknown_order') AND t.currency IS DISTINCT FROM coalesce(v.currency, 'XXX'))
      OR (v.status NOT IN ('currency_mismatch', 'unknown_order') AND t.currency IS NULL))
    AND (
    r.scope ->> 'kind' = 'all'
    OR (r.scope ->> 'kind' = 'created_since' AND v.known_order AND EXISTS (SELECT 1 FROM recon.orders o
        WHERE o.order_id = v.order_id AND o.created_at >= (r.scope ->> 'since')::timestamptz))
    OR (r.kind = 'nightly' AND v.order_id IN (SELECT unnest(q.order_ids) FROM recon.export_requests q
        WHERE q.nightly_run_id = r.nightly_run_id AND q.attempt = 1))
    OR (r.kind <> 'nightly' AND r.scope ->> 'kind' = 'orders' AND v.order_id IN (SELECT s.order_id
        FROM recon.run_scope_orders s WHERE s.run_id = r.run_id)))
) moved
GROUP BY run_id, currency, verdict_currency, known_order;

-- The verdicts with warnings, a few in a million: listed (reporting.warnings, a report's warnings) without reading
-- every verdict. A verdict without warnings stores null (src/reconcile/verdicts-sql.ts).
CREATE INDEX verdicts_warnings_idx ON recon.verdicts (order_id) WHERE warnings IS NOT NULL;
CREATE INDEX verdict_history_warnings_idx ON recon.verdict_history (order_id) WHERE warnings IS NOT NULL;
