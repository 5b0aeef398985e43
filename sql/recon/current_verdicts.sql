-- The current verdict of every order, as finished runs gave it: a run still writing has replaced some rows of
-- recon.verdicts already, and until it finishes its readers see the versions it replaced.
-- The lifecycle is the one the latest finished run that judged the order gave, as src/reconcile/lifecycle-sql.ts
-- reads it for a run: an exception is new in the run that first saw it, persisting after; a resolution is resolved in
-- its own run only. A version judged again by a later run (rejudged_run_id, src/reconcile/judged-again.ts) is read
-- as of that later run.
CREATE VIEW recon.current_verdicts AS
SELECT v.run_id, v.order_id, v.known_order, v.status,
  CASE WHEN v.status NOT IN ('matched', 'pending')
      THEN CASE WHEN v.first_seen_run_id = v.run_id AND v.rejudged_run_id IS NULL THEN 'new' ELSE 'persisting' END
    WHEN v.lifecycle = 'resolved' AND v.rejudged_run_id IS NULL THEN 'resolved' END AS lifecycle,
  v.first_seen_run_id, v.first_seen_at, v.expected_minor, v.settled_minor, v.delta_minor, v.currency,
  v.transaction_ids, v.warnings, v.explanation, v.at_risk_minor
FROM recon.verdicts v
WHERE NOT EXISTS (SELECT 1 FROM recon.reconciliation_runs r WHERE r.run_id = v.run_id AND r.finished_at IS NULL)
UNION ALL
SELECT h.run_id, h.order_id, h.known_order, h.status,
  CASE WHEN h.status NOT IN ('matched', 'pending')
      THEN CASE WHEN h.first_seen_run_id = h.run_id AND h.rejudged_run_id IS NULL THEN 'new' ELSE 'persisting' END
    WHEN h.lifecycle = 'resolved' AND h.rejudged_run_id IS NULL THEN 'resolved' END,
  h.first_seen_run_id, h.first_seen_at, h.expected_minor, h.settled_minor, h.delta_minor, h.currency,
  h.transaction_ids, h.warnings, h.explanation, h.at_risk_minor
FROM recon.verdict_history h
WHERE h.until_run_id IN (SELECT r.run_id FROM recon.reconciliation_runs r WHERE r.finished_at IS NULL);
