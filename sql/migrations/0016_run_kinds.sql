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
