-- The open exceptions' questions order and filter on a verdict's figures and show its reason. The reason was read from
-- the explanation (jsonb) of each row, so every such question read the whole of recon.verdicts, wide rows and all,
-- where the figures alone are in verdicts_exceptions_idx. The reason is now a column generated from the explanation,
-- so nothing that writes a verdict can set it otherwise, and the index carries it: "the 20 most at risk" reads the
-- index alone and builds explanations for its 20 rows only (reporting.reconciliation). Adding the column rewrites the
-- table once.
ALTER TABLE recon.verdicts ADD COLUMN reason text GENERATED ALWAYS AS (explanation ->> 'reason') STORED;

DROP INDEX recon.verdicts_exceptions_idx;
CREATE INDEX verdicts_exceptions_idx ON recon.verdicts (order_id)
  INCLUDE (status, known_order, currency, at_risk_minor, expected_minor, settled_minor, delta_minor, run_id,
    first_seen_run_id, first_seen_at, lifecycle, rejudged_run_id, reason)
  WHERE status NOT IN ('matched', 'pending');
