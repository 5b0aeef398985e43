-- A run that judges every order of its scope against the current verdicts, written slice by slice by several
-- connections (src/reconcile/reconcile.ts), keeps its changes here until the transaction that finishes it applies
-- them: recon.verdicts never holds a version of an unfinished run in place of another, and recon.current_verdicts
-- reads it alone, with the statistics of its ORDERIDs. (Read beside the replaced versions, as a UNION, it had none:
-- the planner took a join on order_id for a hundred times its rows.) The columns are those of the verdict
-- statement's rows (src/reconcile/verdicts-sql.ts, `w`). Empty between runs.
CREATE TABLE recon.run_verdict_changes (
  run_id            bigint NOT NULL,
  change            text NOT NULL,
  order_id          text NOT NULL,
  known             boolean,
  verdict           text,
  lifecycle         text,
  first_seen_run_id bigint,
  first_seen_at     timestamptz,
  expected          bigint,
  settled           bigint,
  delta             bigint,
  currency          char(3),
  transaction_ids   text[],
  warnings          text[],
  explanation       jsonb,
  at_risk           bigint,
  recheck_at        timestamptz
);
CREATE INDEX run_verdict_changes_run ON recon.run_verdict_changes (run_id);

-- What a run cut short the earlier way left in recon.verdicts (its versions in place of those it replaced, kept in
-- recon.verdict_history until it) is put back as its next run would have; the next run removes the run itself.
-- Skipped while a run holds the reconciliation lock (src/reconcile/reconcile-lock.ts): an earlier version's run,
-- still writing, which finishes or removes itself.
DO $$
BEGIN
  IF pg_try_advisory_xact_lock(125779785510401) THEN
    DELETE FROM recon.verdicts v USING recon.reconciliation_runs r
    WHERE r.run_id = v.run_id AND r.finished_at IS NULL;
    INSERT INTO recon.verdicts (run_id, order_id, known_order, status, lifecycle, first_seen_run_id, first_seen_at,
      expected_minor, settled_minor, delta_minor, currency, transaction_ids, warnings, explanation, rejudged_run_id,
      at_risk_minor, recheck_at)
    SELECT h.run_id, h.order_id, h.known_order, h.status, h.lifecycle, h.first_seen_run_id, h.first_seen_at,
      h.expected_minor, h.settled_minor, h.delta_minor, h.currency, h.transaction_ids, h.warnings, h.explanation,
      h.rejudged_run_id, h.at_risk_minor, '-infinity'
    FROM recon.verdict_history h JOIN recon.reconciliation_runs r ON r.run_id = h.until_run_id AND r.finished_at IS NULL;
    DELETE FROM recon.verdict_history h USING recon.reconciliation_runs r
    WHERE r.run_id = h.until_run_id AND r.finished_at IS NULL;
  END IF;
END $$;
