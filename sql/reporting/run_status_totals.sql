-- The difference explained: a run's bridge per currency broken down by status, so that offsetting errors (a
-- status_mismatch of +556.99 against an amount_mismatch of -509.80) no longer hide each other in one total. Read from
-- the run's verdicts as the run gave them (the versions that held at it, within its scope, as reporting.run_orders
-- lists it), so the parts of a finished run add up to its reporting.run_totals row; a run cut short has no bridge and
-- no rows here. A verdict without a currency counts under XXX, as the bridge does (recon.run_totals, whose currency is
-- never null).
CREATE VIEW reporting.run_status_totals AS
SELECT
  s.run_id,
  v.currency,
  v.status,
  count(*)::integer AS verdicts,
  count(*) FILTER (WHERE v.known_order)::integer AS orders,
  count(*) FILTER (WHERE NOT v.known_order)::integer AS unknown_orders,
  sum(v.expected_minor)::bigint AS expected_minor,
  sum(v.settled_minor)::bigint AS settled_minor,
  sum(v.delta_minor)::bigint AS delta_minor,
  (sum(v.settled_minor) - sum(v.expected_minor))::bigint AS difference_minor,
  recon.minor_to_unit(sum(v.expected_minor)::bigint, v.currency) AS expected,
  recon.minor_to_unit(sum(v.settled_minor)::bigint, v.currency) AS settled,
  recon.minor_to_unit(sum(v.delta_minor)::bigint, v.currency) AS delta,
  recon.minor_to_unit((sum(v.settled_minor) - sum(v.expected_minor))::bigint, v.currency) AS difference
FROM (SELECT DISTINCT o.run_id, o.order_id FROM reporting.run_orders o) s
JOIN recon.reconciliation_runs r ON r.run_id = s.run_id AND r.finished_at IS NOT NULL
JOIN LATERAL (
  SELECT x.known_order, x.status, coalesce(x.currency, 'XXX')::char(3) AS currency, x.expected_minor,
    x.settled_minor, x.delta_minor
  FROM recon.verdict_versions x
  WHERE x.order_id = s.order_id AND x.run_id <= s.run_id AND (x.until_run_id IS NULL OR x.until_run_id > s.run_id)
) v ON true
GROUP BY s.run_id, v.currency, v.status
ORDER BY s.run_id, v.currency, v.status;

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
COMMENT ON COLUMN reporting.run_status_totals.currency IS
  'ISO 4217 currency code of the amounts; XXX for verdicts without a currency, as in reporting.run_totals.';
