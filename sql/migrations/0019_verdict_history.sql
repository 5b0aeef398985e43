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

-- The current verdict of every order, as finished runs gave it: a run still writing has replaced some rows of
-- recon.verdicts already, and until it finishes its readers see the versions it replaced.
CREATE VIEW recon.current_verdicts AS
SELECT v.run_id, v.order_id, v.known_order, v.status, v.lifecycle, v.first_seen_run_id, v.first_seen_at,
  v.expected_minor, v.settled_minor, v.delta_minor, v.currency, v.transaction_ids, v.warnings, v.explanation
FROM recon.verdicts v
WHERE NOT EXISTS (SELECT 1 FROM recon.reconciliation_runs r WHERE r.run_id = v.run_id AND r.finished_at IS NULL)
UNION ALL
SELECT h.run_id, h.order_id, h.known_order, h.status, h.lifecycle, h.first_seen_run_id, h.first_seen_at,
  h.expected_minor, h.settled_minor, h.delta_minor, h.currency, h.transaction_ids, h.warnings, h.explanation
FROM recon.verdict_history h
WHERE h.until_run_id IN (SELECT r.run_id FROM recon.reconciliation_runs r WHERE r.finished_at IS NULL);

-- Every version, current or not; a version holds at run R when run_id <= R < coalesce(until_run_id, infinity).
CREATE VIEW recon.verdict_versions AS
SELECT v.run_id, v.order_id, v.known_order, v.status, v.lifecycle, v.first_seen_run_id, v.first_seen_at,
  v.expected_minor, v.settled_minor, v.delta_minor, v.currency, v.transaction_ids, v.warnings, v.explanation,
  NULL::bigint AS until_run_id
FROM recon.verdicts v
UNION ALL
SELECT h.run_id, h.order_id, h.known_order, h.status, h.lifecycle, h.first_seen_run_id, h.first_seen_at,
  h.expected_minor, h.settled_minor, h.delta_minor, h.currency, h.transaction_ids, h.warnings, h.explanation,
  h.until_run_id
FROM recon.verdict_history h;

CREATE OR REPLACE VIEW reporting.reconciliation AS
SELECT
  v.order_id,
  v.known_order,
  v.status,
  v.lifecycle,
  v.expected_minor,
  v.settled_minor,
  v.delta_minor,
  v.currency,
  v.first_seen_at AS first_seen,
  v.run_id,
  r.as_of,
  coalesce(v.explanation, jsonb_build_object(
    'rule', v.status,
    'reason', format('settled %s equals the expected %s%s', recon.format_money(v.settled_minor, v.currency),
      recon.format_money(v.expected_minor, v.currency),
      CASE WHEN v.delta_minor <> 0 THEN ' within the tolerance of ' || recon.format_money(r.tolerance_minor, v.currency) ELSE '' END),
    'warnings', to_jsonb(coalesce(v.warnings, '{}'::text[])),
    'figures', jsonb_build_object(
      'settled', v.settled_minor::text, 'expected', v.expected_minor::text, 'delta', v.delta_minor::text,
      'tolerance', r.tolerance_minor::text),
    'assembled_on_read', true
  )) || jsonb_build_object('transactions', (
    SELECT coalesce(jsonb_agg(recon.explained_transaction(t, f.name)
        || CASE WHEN t.updated_at > r.started_at THEN '{"changed_after_run": true}'::jsonb ELSE '{}'::jsonb END
      ORDER BY t.occurred_at, t.transaction_id), '[]'::jsonb)
    FROM recon.transactions t LEFT JOIN recon.files f ON f.file_id = t.file_id
    WHERE t.transaction_id = ANY (v.transaction_ids))) AS explanation
FROM recon.current_verdicts v
JOIN recon.reconciliation_runs r ON r.run_id = v.run_id;

COMMENT ON VIEW reporting.reconciliation IS
  'The current state: the current verdict of every order and of every unknown ORDERID (transactions without an order). Later runs that judged the order and found the same verdict leave it as it is: run_id and as_of are those of the run the verdict holds from.';
COMMENT ON COLUMN reporting.reconciliation.run_id IS 'The run from which this verdict holds (reporting.runs.run_id): the run that found it; later runs that judged the order found the same.';
COMMENT ON COLUMN reporting.reconciliation.as_of IS 'That run''s as_of: the instant the verdict''s ages were measured at, timestamptz.';

CREATE OR REPLACE VIEW reporting.daily_summary AS
SELECT
  (o.created_at AT TIME ZONE 'UTC')::date AS day,
  coalesce(v.currency, o.currency) AS currency,
  count(*)::integer AS orders,
  count(*) FILTER (WHERE v.status = 'matched')::integer AS matched,
  count(*) FILTER (WHERE v.status = 'pending')::integer AS pending,
  count(*) FILTER (WHERE v.status NOT IN ('matched', 'pending'))::integer AS exceptions,
  sum(v.expected_minor)::bigint AS expected_minor,
  sum(v.settled_minor)::bigint AS settled_minor
FROM recon.current_verdicts v
JOIN recon.orders o ON o.order_id = v.order_id
WHERE v.known_order
GROUP BY 1, 2
ORDER BY 1, 2;

CREATE OR REPLACE VIEW reporting.run_orders AS
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

-- Runs say how much they computed and changed, and whether retention pruned their history.
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
  r.not_found_count,
  r.verdicts_computed,
  r.verdicts_changed,
  r.pruned_at AS history_pruned_at
FROM recon.reconciliation_runs r
LEFT JOIN recon.nightly_runs nr ON nr.nightly_run_id = r.nightly_run_id
ORDER BY r.run_id;

COMMENT ON COLUMN reporting.runs.verdicts_computed IS 'How many verdicts the run computed afresh: every order in its scope, or, for a run over all orders after another, only those whose orders, transactions or notifications changed since or whose time came (a grace period or capture window ending).';
COMMENT ON COLUMN reporting.runs.verdicts_changed IS 'How many of the scope''s verdicts differ from the order''s verdict before the run (reporting.verdict_history has a row for each).';
COMMENT ON COLUMN reporting.runs.history_pruned_at IS 'When retention (recon prune, RECON_RUN_RETENTION_DAYS) removed this run''s bridge and named orders, timestamptz; null while its history is whole.';

-- Every change of an order's verdict: its first verdict, each run that found a different one, and the run that
-- no longer judged it (an unknown ORDERID whose succeeded transactions are gone).
CREATE VIEW reporting.verdict_history AS
SELECT
  x.order_id,
  x.run_id,
  r.as_of,
  r.kind AS run_kind,
  CASE WHEN x.before_status IS NULL THEN 'first' ELSE 'changed' END AS change,
  x.before_status AS status_before,
  x.status AS status_after,
  x.before_lifecycle AS lifecycle_before,
  x.lifecycle AS lifecycle_after,
  x.currency,
  x.before_expected_minor AS expected_before_minor,
  x.expected_minor AS expected_after_minor,
  x.before_settled_minor AS settled_before_minor,
  x.settled_minor AS settled_after_minor,
  x.before_delta_minor AS delta_before_minor,
  x.delta_minor AS delta_after_minor,
  x.first_seen_at AS first_seen
FROM (
  SELECT v.*,
    lag(v.status) OVER w AS before_status,
    lag(v.lifecycle) OVER w AS before_lifecycle,
    lag(v.expected_minor) OVER w AS before_expected_minor,
    lag(v.settled_minor) OVER w AS before_settled_minor,
    lag(v.delta_minor) OVER w AS before_delta_minor
  FROM recon.verdict_versions v
  WINDOW w AS (PARTITION BY v.order_id ORDER BY v.run_id)
) x
JOIN recon.reconciliation_runs r ON r.run_id = x.run_id AND r.finished_at IS NOT NULL
UNION ALL
SELECT h.order_id, h.until_run_id, r.as_of, r.kind, 'removed', h.status, NULL, h.lifecycle, NULL, h.currency,
  h.expected_minor, NULL, h.settled_minor, NULL, h.delta_minor, NULL, h.first_seen_at
FROM recon.verdict_history h
JOIN recon.reconciliation_runs r ON r.run_id = h.until_run_id AND r.finished_at IS NOT NULL
WHERE NOT EXISTS (SELECT 1 FROM recon.verdict_versions n WHERE n.order_id = h.order_id AND n.run_id = h.until_run_id);

COMMENT ON VIEW reporting.verdict_history IS
  'Every change of an order''s verdict, one row per change: its first verdict, each run that found a different status, lifecycle or amounts, and the run that no longer judged an ORDERID (change = removed). Filter by order_id; runs that found the same verdict add no row.';
COMMENT ON COLUMN reporting.verdict_history.order_id IS 'The order id (ORDERID).';
COMMENT ON COLUMN reporting.verdict_history.run_id IS 'The run that found the change (reporting.runs.run_id).';
COMMENT ON COLUMN reporting.verdict_history.as_of IS 'That run''s as_of, timestamptz.';
COMMENT ON COLUMN reporting.verdict_history.run_kind IS 'What started that run: nightly, backfill or manual.';
COMMENT ON COLUMN reporting.verdict_history.change IS 'first (the order''s first verdict), changed (a different verdict than before) or removed (the ORDERID is no longer judged: an unknown ORDERID whose succeeded transactions are gone).';
COMMENT ON COLUMN reporting.verdict_history.status_before IS 'The status before the change; null for the first verdict.';
COMMENT ON COLUMN reporting.verdict_history.status_after IS 'The status from this run on; null when removed.';
COMMENT ON COLUMN reporting.verdict_history.lifecycle_before IS 'The lifecycle before the change (new, persisting, resolved or null).';
COMMENT ON COLUMN reporting.verdict_history.lifecycle_after IS 'The lifecycle from this run on: a status that stays the same still changes its lifecycle once (new becomes persisting, resolved becomes null).';
COMMENT ON COLUMN reporting.verdict_history.currency IS 'ISO 4217 currency code of the amounts.';
COMMENT ON COLUMN reporting.verdict_history.expected_before_minor IS 'What the order should have settled, before the change, in minor units of currency.';
COMMENT ON COLUMN reporting.verdict_history.expected_after_minor IS 'What the order should have settled, from this run on, in minor units of currency.';
COMMENT ON COLUMN reporting.verdict_history.settled_before_minor IS 'What the service had settled, before the change, in minor units of currency.';
COMMENT ON COLUMN reporting.verdict_history.settled_after_minor IS 'What the service had settled, from this run on, in minor units of currency.';
COMMENT ON COLUMN reporting.verdict_history.delta_before_minor IS 'settled - expected before the change, in minor units of currency.';
COMMENT ON COLUMN reporting.verdict_history.delta_after_minor IS 'settled - expected from this run on, in minor units of currency.';
COMMENT ON COLUMN reporting.verdict_history.first_seen IS 'For an exception, as_of of the run in which it first appeared, timestamptz.';

COMMENT ON VIEW reporting.exceptions IS
  'The open exceptions: orders and unknown ORDERIDs whose current verdict is neither matched nor pending, oldest first.';
COMMENT ON COLUMN reporting.exceptions.run_id IS 'The run the current verdict holds from (reporting.runs.run_id).';
COMMENT ON VIEW reporting.daily_summary IS
  'The current verdicts of the merchant''s orders per day of order creation (UTC) and currency; unknown ORDERIDs are not counted.';
COMMENT ON COLUMN reporting.daily_summary.matched IS 'Number of those orders whose current verdict is matched.';
COMMENT ON COLUMN reporting.daily_summary.pending IS 'Number of those orders whose current verdict is pending.';
COMMENT ON COLUMN reporting.daily_summary.exceptions IS 'Number of those orders whose current verdict is an exception (neither matched nor pending).';
