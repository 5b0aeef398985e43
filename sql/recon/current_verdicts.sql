-- The current verdict of every order, as finished runs gave it. The verdicts of a run still writing are not read: a
-- first run's, inserted slice by slice, are hidden until it finishes; a run with current verdicts to replace keeps
-- its changes apart until then (recon.run_verdict_changes), so that no replaced version has to be read instead.
-- The lifecycle is the one the latest finished run that judged the order gave, as src/reconcile/lifecycle-sql.ts
-- reads it for a run: an exception is new in the run that first saw it, persisting after; a resolution is resolved in
-- its own run only. A version judged again by a later run is read as of that later run: one marked by it
-- (rejudged_run_id, src/reconcile/judged-again.ts), or one older than the latest finished run over all orders, which
-- judged every current verdict and marks none (src/reconcile/latest-run-over-all-sql.ts; one look at the runs, through
-- their index of migration 0042, whatever the number of verdicts read).
CREATE VIEW recon.current_verdicts AS
SELECT v.run_id, v.order_id, v.known_order, v.status,
  CASE WHEN v.rejudged_run_id IS NOT NULL OR v.run_id < (SELECT coalesce(max(r.run_id), 0)
      FROM recon.reconciliation_runs r WHERE r.finished_at IS NOT NULL AND r.scope ->> 'kind' = 'all')
    THEN CASE WHEN v.status NOT IN ('matched', 'pending') THEN 'persisting' END
    WHEN v.status NOT IN ('matched', 'pending')
      THEN CASE WHEN v.first_seen_run_id = v.run_id THEN 'new' ELSE 'persisting' END
    WHEN v.lifecycle = 'resolved' THEN 'resolved' END AS lifecycle,
  v.first_seen_run_id, v.first_seen_at, v.expected_minor, v.settled_minor, v.delta_minor, v.currency,
  v.transaction_ids, v.warnings, v.explanation, v.at_risk_minor, v.reason
FROM recon.verdicts v
WHERE NOT EXISTS (SELECT 1 FROM recon.reconciliation_runs r WHERE r.run_id = v.run_id AND r.finished_at IS NULL);
