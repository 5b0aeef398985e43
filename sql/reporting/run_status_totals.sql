-- The difference explained: a run's bridge per currency broken down by status, so that offsetting errors (a
-- status_mismatch of +556.99 against an amount_mismatch of -509.80) no longer hide each other in one total, and what
-- each status puts at risk beside it (a capture_expired order differs by nothing while its authorization is lost).
-- Written by the run when it finishes (src/reconcile/run-status-totals.ts), from the verdicts it gave, so the parts
-- of a finished run add up to its reporting.run_totals row; a run cut short has no bridge and no rows here. A verdict
-- without a currency counts under XXX, as the bridge does.
CREATE VIEW reporting.run_status_totals AS
SELECT
  s.run_id,
  s.currency,
  s.status,
  s.verdicts,
  s.orders,
  s.unknown_orders,
  s.expected_minor,
  s.settled_minor,
  s.delta_minor,
  s.settled_minor - s.expected_minor AS difference_minor,
  recon.minor_to_unit(s.expected_minor, s.currency) AS expected,
  recon.minor_to_unit(s.settled_minor, s.currency) AS settled,
  recon.minor_to_unit(s.delta_minor, s.currency) AS delta,
  recon.minor_to_unit(s.settled_minor - s.expected_minor, s.currency) AS difference,
  s.at_risk_minor,
  recon.minor_to_unit(s.at_risk_minor, s.currency) AS at_risk,
  s.at_risk_unknown
FROM recon.run_status_totals s
ORDER BY s.run_id, s.currency, s.status;

COMMENT ON VIEW reporting.run_status_totals IS
  'The bridge of every finished run broken down by status, one row per run, currency and status: what each kind of verdict expected and settled. The rows of a run and currency add up to its reporting.run_totals row; filter by run_id.';
COMMENT ON COLUMN reporting.run_status_totals.run_id IS 'The run (reporting.runs.run_id).';
COMMENT ON COLUMN reporting.run_status_totals.status IS 'The verdict''s status (see reporting.reconciliation.status).';
COMMENT ON COLUMN reporting.run_status_totals.verdicts IS 'Number of the run''s verdicts with this status in this currency: orders plus unknown ORDERIDs.';
COMMENT ON COLUMN reporting.run_status_totals.orders IS 'Number of the merchant''s orders among them.';
COMMENT ON COLUMN reporting.run_status_totals.unknown_orders IS 'Number of unknown ORDERIDs (transactions without an order) among them.';
COMMENT ON COLUMN reporting.run_status_totals.expected_minor IS 'Total those verdicts expected to settle, in minor units of currency.';
COMMENT ON COLUMN reporting.run_status_totals.settled_minor IS 'Total the service settled for them, in minor units of currency.';
COMMENT ON COLUMN reporting.run_status_totals.delta_minor IS 'Sum of their delta_minor (for an authorized order: authorized - amount), in minor units of currency; differs from difference_minor only where a verdict''s delta is not settled - expected.';
COMMENT ON COLUMN reporting.run_status_totals.difference_minor IS 'settled_minor - expected_minor: this status''s share of the run''s difference, in minor units of currency.';
COMMENT ON COLUMN reporting.run_status_totals.expected IS 'expected_minor in the currency''s unit, exact (numeric: 12.34 EUR, 1500 JPY, 1.234 KWD).';
COMMENT ON COLUMN reporting.run_status_totals.settled IS 'settled_minor in the currency''s unit, exact (numeric).';
COMMENT ON COLUMN reporting.run_status_totals.delta IS 'delta_minor in the currency''s unit, exact (numeric).';
COMMENT ON COLUMN reporting.run_status_totals.difference IS 'difference_minor in the currency''s unit, exact (numeric).';
COMMENT ON COLUMN reporting.run_status_totals.at_risk_minor IS 'The money those verdicts put at risk (the sum of reporting.reconciliation.at_risk_minor, the rule per status there), in minor units of currency; of the verdicts whose figures are known (at_risk_unknown counts the others).';
COMMENT ON COLUMN reporting.run_status_totals.at_risk IS 'at_risk_minor in the currency''s unit, exact (numeric).';
COMMENT ON COLUMN reporting.run_status_totals.at_risk_unknown IS 'Number of those verdicts whose money at risk is unknown (their figures were missing): 0 for every run recon wrote since it stores the money at risk.';
COMMENT ON COLUMN reporting.run_status_totals.currency IS
  'ISO 4217 currency code of the amounts; XXX for verdicts without a currency, as in reporting.run_totals.';
