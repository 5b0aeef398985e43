-- Every reconciliation run: its scope, settings, counts per status, whether it is suspect, how much it computed and
-- changed, and whether retention pruned its history.
CREATE VIEW reporting.runs AS
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

COMMENT ON VIEW reporting.runs IS
  'Every reconciliation run (recon reconcile), oldest first by run_id. Its bridge per currency is in reporting.run_totals.';
COMMENT ON COLUMN reporting.runs.run_id IS 'The run''s id, in the order runs started.';
COMMENT ON COLUMN reporting.runs.as_of IS 'The instant every age of the run was measured at (--as-of, default the start), timestamptz.';
COMMENT ON COLUMN reporting.runs.tolerance_minor IS 'Amount tolerance the run used, in minor units of currency.';
COMMENT ON COLUMN reporting.runs.grace_hours IS 'Grace period the run used, in hours.';
COMMENT ON COLUMN reporting.runs.started_at IS 'When the run started (wall clock), timestamptz.';
COMMENT ON COLUMN reporting.runs.finished_at IS 'When the run finished, timestamptz; null while it runs or if it did not finish.';
COMMENT ON COLUMN reporting.runs.orders_in_scope IS 'Orders and unknown ORDERIDs given a verdict: the sum of counts.';
COMMENT ON COLUMN reporting.runs.counts IS 'Number of verdicts per status (jsonb {"matched": n, ...}, one key per status that occurred); null until the run finished.';
COMMENT ON COLUMN reporting.runs.matched IS 'Number of matched verdicts; null until the run finished.';
COMMENT ON COLUMN reporting.runs.pending IS 'Number of pending verdicts; null until the run finished.';
COMMENT ON COLUMN reporting.runs.exceptions IS 'Number of verdicts that are exceptions (neither matched nor pending), unknown ORDERIDs included; null until the run finished.';
COMMENT ON COLUMN reporting.runs.suspect IS 'True when orders in scope expect money but no transaction at all was found: an empty source, not a clean run.';
COMMENT ON COLUMN reporting.runs.suspect_reason IS 'Why the run is suspect, in words; null when it is not.';
COMMENT ON COLUMN reporting.runs.scope IS 'What the run judged (jsonb): {"kind": "all"}, {"kind": "orders", "count": n} (the orders themselves are in reporting.run_orders) or {"kind": "created_since", "since": "..."}.';
COMMENT ON COLUMN reporting.runs.not_found IS 'The first 100 order ids asked for that are neither an order nor an ORDERID with transactions (not_found_count says how many in all).';
COMMENT ON COLUMN reporting.runs.kind IS 'What started the run: nightly (the reconciliation of a nightly run), backfill (recon backfill) or manual (recon reconcile).';
COMMENT ON COLUMN reporting.runs.description IS 'The run''s scope in words: ''nightly run of 2026-11-26: 19,999 orders'', ''all orders and unknown ORDERIDs'', ''orders created since 2026-11-01'', ''3 orders''.';
COMMENT ON COLUMN reporting.runs.nightly_run_id IS 'The nightly run whose reconciliation this is; null for other kinds.';
COMMENT ON COLUMN reporting.runs.nightly_date IS 'The date of that nightly run (its key, in RECON_SCHEDULE_TIMEZONE); null for other kinds.';
COMMENT ON COLUMN reporting.runs.not_found_count IS 'How many order ids asked for are neither an order nor an ORDERID with transactions.';
COMMENT ON COLUMN reporting.runs.verdicts_computed IS 'How many verdicts the run computed afresh: every order in its scope, or, for a run over all orders after another, only those whose orders, transactions or notifications changed since or whose time came (a grace period or capture window ending).';
COMMENT ON COLUMN reporting.runs.verdicts_changed IS 'How many of the scope''s verdicts differ from the order''s verdict before the run (reporting.verdict_history has a row for each).';
COMMENT ON COLUMN reporting.runs.history_pruned_at IS 'When retention (recon prune, RECON_RUN_RETENTION_DAYS) removed this run''s bridge and named orders, timestamptz; null while its history is whole.';
