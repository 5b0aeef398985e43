-- A run's bridge per currency: orders, unknown ORDERIDs, expected and settled money.
CREATE VIEW reporting.run_totals AS
SELECT
  t.run_id,
  t.currency,
  t.orders,
  t.unknown_orders,
  t.expected_minor,
  t.settled_minor,
  recon.minor_to_unit(t.expected_minor, t.currency) AS expected,
  recon.minor_to_unit(t.settled_minor, t.currency) AS settled
FROM recon.run_totals t;

COMMENT ON VIEW reporting.run_totals IS
  'The bridge of every run, one row per run and currency: amounts of different currencies are never added.';
COMMENT ON COLUMN reporting.run_totals.run_id IS 'The run (reporting.runs.run_id).';
COMMENT ON COLUMN reporting.run_totals.currency IS 'ISO 4217 currency code of the totals.';
COMMENT ON COLUMN reporting.run_totals.orders IS 'Number of the merchant''s orders judged in this currency.';
COMMENT ON COLUMN reporting.run_totals.unknown_orders IS 'Number of unknown ORDERIDs (transactions without an order) judged in this currency.';
COMMENT ON COLUMN reporting.run_totals.expected_minor IS 'Total expected to settle, in minor units of currency.';
COMMENT ON COLUMN reporting.run_totals.settled_minor IS 'Total settled by the service (orders plus unknown ORDERIDs), in minor units of currency.';
COMMENT ON COLUMN reporting.run_totals.expected IS 'expected_minor in the currency''s unit, exact (numeric: 12.34 EUR, 1500 JPY, 1.234 KWD).';
COMMENT ON COLUMN reporting.run_totals.settled IS 'settled_minor in the currency''s unit, exact (numeric).';
