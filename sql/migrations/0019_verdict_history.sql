-- History that grows with changes, not with runs.
--
-- recon.verdicts now holds one row per order: its current verdict, and the run from which it holds (run_id). A run
-- writes only what changed: a verdict different from the current one replaces it, and the replaced row moves to
-- recon.verdict_history with the run that superseded it (until_run_id). An ORDERID a run was asked about and no
-- longer judges (an unknown ORDERID whose succeeded transactions are gone) leaves recon.verdicts the same way, with
-- no successor. So a version holds for the runs from its run_id up to, not including, its until_run_id; and which
-- of those runs judged the order is told by each run's scope (every order for a run over all orders, the named
-- orders of recon.run_scope_orders, a nightly run's export requests). A run's verdicts are therefore exactly the
-- versions that held at it, within its scope: its report stays the same after any number of later runs.
--
-- recheck_at says when the mere passing of time may change a current verdict (a grace period or a capture window
-- ending), or '-infinity' when the next run must look again whatever happens (a lifecycle that moves on by
-- itself: new becomes persisting, resolved becomes nothing). A run over all orders that follows another re-judges
-- only the orders whose inputs changed since (recon.reconciliation_runs.inputs_seen_before) or whose recheck_at
-- has come: an order whose verdict did not change costs a run nothing to keep.

-- The verdicts of runs cut short before this migration never counted: they go (the next run removes the runs).
DELETE FROM recon.verdicts v USING recon.reconciliation_runs r WHERE r.run_id = v.run_id AND r.finished_at IS NULL;

CREATE TABLE recon.verdict_history (
  run_id             bigint NOT NULL,
  order_id           text NOT NULL,
  known_order        boolean NOT NULL,
  status             text NOT NULL,
  lifecycle          text,
  first_seen_run_id  bigint,
  first_seen_at      timestamptz,
  expected_minor     bigint NOT NULL,
  settled_minor      bigint NOT NULL,
  delta_minor        bigint NOT NULL,
  currency           char(3),
  transaction_ids    text[] NOT NULL,
  warnings           text[],
  explanation        jsonb,
  -- The run from which this version no longer holds: the run that wrote its successor, or that no longer judged
  -- the ORDERID at all.
  until_run_id       bigint NOT NULL,
  CHECK (until_run_id > run_id)
);

-- Every run each order was judged in, before this migration, becomes a version: exact, if not yet compact.
INSERT INTO recon.verdict_history (run_id, order_id, known_order, status, lifecycle, first_seen_run_id, first_seen_at,
  expected_minor, settled_minor, delta_minor, currency, transaction_ids, warnings, explanation, until_run_id)
SELECT run_id, order_id, known_order, status, lifecycle, first_seen_run_id, first_seen_at, expected_minor,
  settled_minor, delta_minor, currency, transaction_ids, warnings, explanation, next_run_id
FROM (
  SELECT v.*, lead(v.run_id) OVER (PARTITION BY v.order_id ORDER BY v.run_id) AS next_run_id FROM recon.verdicts v
) versions
WHERE next_run_id IS NOT NULL;

DELETE FROM recon.verdicts v
WHERE EXISTS (SELECT 1 FROM recon.verdicts later WHERE later.order_id = v.order_id AND later.run_id > v.run_id);

DROP INDEX recon.verdicts_order_id_run_id_key;
DROP INDEX recon.verdicts_run_id_brin;
DROP INDEX recon.verdicts_exceptions_idx;
DROP INDEX recon.verdicts_order_exceptions_idx;

-- Existing verdicts are looked at again by the next run, which has no earlier run to be incremental from anyway.
ALTER TABLE recon.verdicts ADD COLUMN recheck_at timestamptz;
UPDATE recon.verdicts SET recheck_at = '-infinity';

ALTER TABLE recon.verdicts ADD PRIMARY KEY (order_id);
-- A run replaces about one verdict in a hundred: vacuumed at PostgreSQL's default (a fifth of the rows dead), the
-- table would carry twenty nights of dead rows; at half a percent each night's space is reused by the next.
ALTER TABLE recon.verdicts SET (autovacuum_vacuum_scale_factor = 0.005, autovacuum_vacuum_threshold = 1000);
-- The open exceptions in ORDERID order (the reports' pages, the nightly run's ORDERIDs still moving): a tenth of
-- the orders.
CREATE INDEX verdicts_exceptions_idx ON recon.verdicts (order_id) WHERE status NOT IN ('matched', 'pending');
CREATE INDEX verdicts_recheck_at_idx ON recon.verdicts (recheck_at) WHERE recheck_at IS NOT NULL;

-- An order's versions in order (its history), and the versions a run superseded (undone when the run fails,
-- pruned when no retained run needs them).
CREATE UNIQUE INDEX verdict_history_order_id_run_id_key ON recon.verdict_history (order_id, run_id);
CREATE INDEX verdict_history_until_run_id_idx ON recon.verdict_history (until_run_id);

ALTER TABLE recon.reconciliation_runs
  -- Every change to orders, transactions and notifications made before this instant was visible to the run: the
  -- next run over all orders needs to look only at what changed from here on.
  ADD COLUMN inputs_seen_before timestamptz,
  -- Verdicts computed afresh (every order in scope, or only those that changed or whose time came) and verdicts
  -- that differed from the current one and were written.
  ADD COLUMN verdicts_computed integer,
  ADD COLUMN verdicts_changed integer,
  -- When retention removed the history only this run needed (its bridge, its named orders); the row stays while a
  -- current verdict holds from it.
  ADD COLUMN pruned_at timestamptz;

-- A run looks for notifications received since the previous one.
CREATE INDEX notifications_received_at_idx ON recon.notifications (received_at);
