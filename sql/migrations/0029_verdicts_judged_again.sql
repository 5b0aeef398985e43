-- A lifecycle moves on by itself: an exception is new in the run that first saw it and persisting in every later run
-- that judges the order; a resolution is resolved in its own run only. A run writes no new version for that (it
-- would double what a night adds), so the current verdict says which later run judged it again: rejudged_run_id,
-- set when that run finishes, and only on the versions whose lifecycle it moves (new and resolved). The views read
-- the lifecycle the latest run that judged the order gave from it, where they read the stored one, which stayed
-- "new" however many runs had judged the exception since.
ALTER TABLE recon.verdicts ADD COLUMN rejudged_run_id bigint;
ALTER TABLE recon.verdict_history ADD COLUMN rejudged_run_id bigint;

-- What a finished run marks: the current versions whose lifecycle it would move, not yet marked. A few per night.
CREATE INDEX verdicts_lifecycle_moving_idx ON recon.verdicts (order_id)
  WHERE rejudged_run_id IS NULL AND lifecycle IN ('new', 'resolved');

-- The versions judged again before this migration: by a finished run over all orders, over a creation date that
-- covers the order, over named orders naming it, or by a nightly run asking for it.
UPDATE recon.verdicts v
SET rejudged_run_id = (
  SELECT min(r.run_id) FROM recon.reconciliation_runs r
  WHERE r.run_id > v.run_id AND r.finished_at IS NOT NULL AND (
    r.scope ->> 'kind' = 'all'
    OR (r.scope ->> 'kind' = 'created_since' AND v.known_order AND EXISTS (
      SELECT 1 FROM recon.orders o WHERE o.order_id = v.order_id AND o.created_at >= (r.scope ->> 'since')::timestamptz))
    OR EXISTS (SELECT 1 FROM recon.run_scope_orders s WHERE s.run_id = r.run_id AND s.order_id = v.order_id)
    OR (r.kind = 'nightly' AND EXISTS (SELECT 1 FROM recon.export_requests q
      WHERE q.nightly_run_id = r.nightly_run_id AND q.attempt = 1 AND v.order_id = ANY (q.order_ids)))))
WHERE v.lifecycle IN ('new', 'resolved');
