-- The open warnings: one row per warning of each current verdict, whatever its status. A warning changes no status
-- (a payment on an account that does not serve its order's payment method stays matched), so no list of exceptions
-- shows it: this one does. Read through the verdicts that carry warnings alone (a partial index, migration 0034),
-- never the explanations of a million verdicts.
CREATE VIEW reporting.warnings AS
SELECT
  v.order_id,
  v.known_order,
  v.status,
  w.position::integer AS position,
  w.warning,
  -- The account a misrouted payment went through, as its warning names it (src/reconcile/order-facts-sql.ts). LIKE
  -- first: the regular expression on each of 141,000 warnings of a million orders cost a third of the read.
  CASE WHEN w.warning LIKE '% on account %, which does not serve %'
    THEN substring(w.warning FROM '^[^ ]+ [^ ]+ on account (.*), which does not serve [^ ]+$') END AS identifier,
  v.currency,
  v.run_id
FROM recon.current_verdicts v
CROSS JOIN LATERAL unnest(v.warnings) WITH ORDINALITY AS w (warning, position)
WHERE v.warnings IS NOT NULL
ORDER BY v.order_id, w.position;

COMMENT ON VIEW reporting.warnings IS
  'The open warnings: one row per warning of each current verdict, whatever its status (a warning changes no status: a payment on an account that does not serve its order''s payment method stays matched), by order_id.';
COMMENT ON COLUMN reporting.warnings.order_id IS 'The order id (ORDERID) whose verdict carries the warning.';
COMMENT ON COLUMN reporting.warnings.known_order IS 'False for an ORDERID with succeeded transactions but no order (status unknown_order).';
COMMENT ON COLUMN reporting.warnings.status IS 'The verdict''s status (see reporting.reconciliation.status): matched and pending included.';
COMMENT ON COLUMN reporting.warnings.position IS 'The warning''s place among the verdict''s warnings, from 1.';
COMMENT ON COLUMN reporting.warnings.warning IS 'The warning, one sentence (an element of reporting.reconciliation.warnings).';
COMMENT ON COLUMN reporting.warnings.identifier IS 'The account (IDENTIFIER) the warning names: that of a payment on an account that does not serve its order''s payment method; null for a warning that names none.';
COMMENT ON COLUMN reporting.warnings.currency IS 'ISO 4217 currency code of the verdict''s amounts.';
COMMENT ON COLUMN reporting.warnings.run_id IS 'The run the verdict holds from (reporting.runs.run_id).';
