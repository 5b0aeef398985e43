-- The money a run's orders received, per account and currency, is also split by the bridge it counts in: the
-- verdict's currency (XXX when it has none, as in recon.run_totals) and whether the ORDERID is an order. From these,
-- reporting.received_to_bridge reconciles the money received in a currency with the bridge's settled in it (money
-- paid in another currency than its order's is in no bridge; an unknown ORDERID's money counts in the currency of its
-- first transaction). Fees are kept beside it. Written when the run finishes, in the statement that already walks
-- the run's transactions: reading it costs a few rows a run, never a walk of a million verdicts.
ALTER TABLE recon.run_account_totals ADD COLUMN verdict_currency char(3);
ALTER TABLE recon.run_account_totals ADD COLUMN known_order boolean;
ALTER TABLE recon.run_account_totals ADD COLUMN fees_minor bigint;

-- The runs finished before: written again with the new columns, their verdicts as they gave them, with the
-- transactions as they are now (as 0033 wrote them).
DELETE FROM recon.run_account_totals;
INSERT INTO recon.run_account_totals (run_id, identifier, currency, verdict_currency, known_order, orders, transactions,
  paid_minor, refunded_minor, fees_minor)
SELECT run_id, identifier, currency, verdict_currency, known_order, count(*), sum(transactions),
  coalesce(sum(paid), 0), coalesce(sum(refunded), 0), coalesce(sum(fees), 0)
FROM (
  SELECT r.run_id, t.order_id, t.identifier, t.currency, coalesce(v.currency, 'XXX') AS verdict_currency,
    v.known_order, count(*) AS transactions,
    sum(t.amount_minor) FILTER (WHERE lower(btrim(t.operation_type)) IN ('payment', 'capture')) AS paid,
    sum(t.amount_minor) FILTER (WHERE lower(btrim(t.operation_type)) = 'refund') AS refunded,
    sum(t.fees_minor) AS fees
  FROM recon.reconciliation_runs r
  JOIN (SELECT x.run_id, x.order_id, x.known_order, x.currency, x.transaction_ids, NULL::bigint AS until_run_id
        FROM recon.verdicts x
        UNION ALL
        SELECT h.run_id, h.order_id, h.known_order, h.currency, h.transaction_ids, h.until_run_id
        FROM recon.verdict_history h) v
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
  GROUP BY r.run_id, t.order_id, t.identifier, t.currency, coalesce(v.currency, 'XXX'), v.known_order
) per_order
GROUP BY run_id, identifier, currency, verdict_currency, known_order;

ALTER TABLE recon.run_account_totals ALTER COLUMN verdict_currency SET NOT NULL;
ALTER TABLE recon.run_account_totals ALTER COLUMN known_order SET NOT NULL;
ALTER TABLE recon.run_account_totals ALTER COLUMN fees_minor SET NOT NULL;

-- The verdicts with warnings, a few in a million: listed (reporting.warnings, a report's warnings) without reading
-- every verdict. A verdict without warnings stores null (src/reconcile/verdicts-sql.ts).
CREATE INDEX verdicts_warnings_idx ON recon.verdicts (order_id) WHERE warnings IS NOT NULL;
CREATE INDEX verdict_history_warnings_idx ON recon.verdict_history (order_id) WHERE warnings IS NOT NULL;
