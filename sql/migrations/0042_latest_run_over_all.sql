-- A run over all orders no longer marks the verdicts it judged again (src/reconcile/judged-again.ts): the views read
-- the latest finished one instead, for every verdict they read (sql/recon/current_verdicts.sql). Its own index, a
-- row per such run, finds it at once however many nightly runs came since. The marks written before stay: the views
-- read a verdict as judged again when it is marked or older than that run.
CREATE INDEX reconciliation_runs_over_all_idx ON recon.reconciliation_runs (run_id)
  WHERE finished_at IS NOT NULL AND scope ->> 'kind' = 'all';
