-- Runs that say what they are: a nightly run's reconciliation, a backfill's or one started by hand, with a short
-- description of its scope, and never the list of every ORDERID it judged in its row (20,000 of them made a
-- 250,000-character cell). A run's set of orders stays recoverable: a nightly run's from its export requests, a
-- run over named orders from recon.run_scope_orders, a run over all orders or a creation date from its verdicts.
ALTER TABLE recon.reconciliation_runs
  ADD COLUMN kind text NOT NULL DEFAULT 'manual' CHECK (kind IN ('nightly', 'backfill', 'manual')),
  -- The nightly run whose reconciliation this is (its date is recon.nightly_runs.run_date).
  ADD COLUMN nightly_run_id bigint,
  -- 'nightly run of 2026-11-26: 19,999 orders', 'all orders and unknown ORDERIDs', '3 orders', ...
  ADD COLUMN description text,
  -- How many ORDERIDs asked for are neither an order nor an ORDERID with transactions; not_found keeps the first 100.
  ADD COLUMN not_found_count integer NOT NULL DEFAULT 0 CHECK (not_found_count >= 0);

CREATE TABLE recon.run_scope_orders (
  run_id   bigint NOT NULL REFERENCES recon.reconciliation_runs (run_id) ON DELETE CASCADE,
  order_id text NOT NULL,
  PRIMARY KEY (run_id, order_id)
);

UPDATE recon.reconciliation_runs r
SET kind = 'nightly', nightly_run_id = n.nightly_run_id
FROM recon.nightly_runs n
WHERE n.reconciliation_run_id = r.run_id;

-- The runs before this one kept their named orders in scope.order_ids: moved out, except a nightly run's, which
-- its export requests hold already.
INSERT INTO recon.run_scope_orders (run_id, order_id)
SELECT DISTINCT r.run_id, ids.order_id
FROM recon.reconciliation_runs r, jsonb_array_elements_text(r.scope -> 'order_ids') AS ids (order_id)
WHERE r.scope ->> 'kind' = 'orders' AND r.kind <> 'nightly';

UPDATE recon.reconciliation_runs r
SET
  scope = CASE WHEN r.scope ->> 'kind' = 'orders'
    THEN jsonb_build_object('kind', 'orders', 'count', (SELECT count(DISTINCT id) FROM jsonb_array_elements_text(r.scope -> 'order_ids') AS id))
    ELSE r.scope END,
  not_found_count = cardinality(r.not_found),
  not_found = r.not_found[1:100];

UPDATE recon.reconciliation_runs r
SET description = CASE
  WHEN r.kind = 'nightly' THEN format('nightly run of %s: %s orders',
    (SELECT n.run_date FROM recon.nightly_runs n WHERE n.nightly_run_id = r.nightly_run_id),
    to_char((r.scope ->> 'count')::integer, 'FM999,999,999,990'))
  WHEN r.scope ->> 'kind' = 'all' THEN 'all orders and unknown ORDERIDs'
  WHEN r.scope ->> 'kind' = 'created_since' THEN format('orders created since %s', r.scope ->> 'since')
  WHEN (r.scope ->> 'count')::integer = 1 THEN '1 order'
  ELSE format('%s orders', to_char((r.scope ->> 'count')::integer, 'FM999,999,999,990')) END;

ALTER TABLE recon.reconciliation_runs ALTER COLUMN description SET NOT NULL;

CREATE INDEX reconciliation_runs_kind_idx ON recon.reconciliation_runs (kind, run_id);

CREATE OR REPLACE VIEW reporting.runs AS
SELECT
  r.run_id,
  r.as_of,
  r.scope,
  r.tolerance_minor,
  r.grace_hours,
  r.started_at,
  r.finished_at,
  r.orders_in_scope,
  r.counts,
  CASE WHEN r.counts IS NOT NULL THEN coalesce((r.counts ->> 'matched')::integer, 0) END AS matched,
  CASE WHEN r.counts IS NOT NULL THEN coalesce((r.counts ->> 'pending')::integer, 0) END AS pending,
  CASE WHEN r.counts IS NOT NULL THEN coalesce(
    (SELECT sum(n.value::integer)::integer FROM jsonb_each_text(r.counts) n WHERE n.key NOT IN ('matched', 'pending')),
    0) END AS exceptions,
  r.suspect,
  r.suspect_reason,
  r.not_found,
  r.kind,
  r.description,
  r.nightly_run_id,
  nr.run_date AS nightly_date,
  r.not_found_count
FROM recon.reconciliation_runs r
LEFT JOIN recon.nightly_runs nr ON nr.nightly_run_id = r.nightly_run_id
ORDER BY r.run_id;

COMMENT ON COLUMN reporting.runs.scope IS 'What the run judged (jsonb): {"kind": "all"}, {"kind": "orders", "count": n} (the orders themselves are in reporting.run_orders) or {"kind": "created_since", "since": "..."}.';
COMMENT ON COLUMN reporting.runs.not_found IS 'The first 100 order ids asked for that are neither an order nor an ORDERID with transactions (not_found_count says how many in all).';
COMMENT ON COLUMN reporting.runs.kind IS 'What started the run: nightly (the reconciliation of a nightly run), backfill (recon backfill) or manual (recon reconcile).';
COMMENT ON COLUMN reporting.runs.description IS 'The run''s scope in words: ''nightly run of 2026-11-26: 19,999 orders'', ''all orders and unknown ORDERIDs'', ''orders created since 2026-11-01'', ''3 orders''.';
COMMENT ON COLUMN reporting.runs.nightly_run_id IS 'The nightly run whose reconciliation this is; null for other kinds.';
COMMENT ON COLUMN reporting.runs.nightly_date IS 'The date of that nightly run (its key, in RECON_SCHEDULE_TIMEZONE); null for other kinds.';
COMMENT ON COLUMN reporting.runs.not_found_count IS 'How many order ids asked for are neither an order nor an ORDERID with transactions.';

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
SELECT v.run_id, v.order_id
FROM recon.verdicts v
JOIN recon.reconciliation_runs r ON r.run_id = v.run_id
WHERE r.scope ->> 'kind' IN ('all', 'created_since');

COMMENT ON VIEW reporting.run_orders IS
  'The orders (and unknown ORDERIDs) in each run''s scope: filter by run_id. Those without a verdict of the run are the not-found ones.';
COMMENT ON COLUMN reporting.run_orders.run_id IS 'The run (reporting.runs.run_id).';
COMMENT ON COLUMN reporting.run_orders.order_id IS 'An ORDERID the run was asked to judge.';
