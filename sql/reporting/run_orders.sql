-- Which orders each run judged, whatever its kind: the named ones, a nightly run's (what its first export requests
-- asked about), or, for a run over all orders or a creation date, those it gave a verdict.
CREATE VIEW reporting.run_orders AS
SELECT s.run_id, s.order_id
FROM recon.run_scope_orders s
UNION ALL
SELECT r.run_id, ids.order_id
FROM recon.reconciliation_runs r
JOIN LATERAL (
  SELECT DISTINCT unnest(q.order_ids) AS order_id
  FROM recon.export_requests q
  WHERE q.nightly_run_id = r.nightly_run_id AND q.attempt = 1
) ids ON true
WHERE r.kind = 'nightly'
UNION ALL
SELECT r.run_id, v.order_id
FROM recon.reconciliation_runs r
JOIN recon.verdict_versions v ON v.run_id <= r.run_id AND (v.until_run_id IS NULL OR v.until_run_id > r.run_id)
WHERE r.scope ->> 'kind' = 'all' AND r.finished_at IS NOT NULL
UNION ALL
SELECT r.run_id, v.order_id
FROM recon.reconciliation_runs r
JOIN recon.verdict_versions v ON v.run_id <= r.run_id AND (v.until_run_id IS NULL OR v.until_run_id > r.run_id)
JOIN recon.orders o ON o.order_id = v.order_id AND o.created_at >= (r.scope ->> 'since')::timestamptz
WHERE r.scope ->> 'kind' = 'created_since' AND r.finished_at IS NOT NULL AND v.known_order;

COMMENT ON VIEW reporting.run_orders IS
  'The orders (and unknown ORDERIDs) in each run''s scope: filter by run_id. Those without a verdict of the run are the not-found ones.';
COMMENT ON COLUMN reporting.run_orders.run_id IS 'The run (reporting.runs.run_id).';
COMMENT ON COLUMN reporting.run_orders.order_id IS 'An ORDERID the run was asked to judge.';
