-- Every change of an order's verdict: its first verdict, each run that found a different one, and the run that no
-- longer judged it (an unknown ORDERID whose succeeded transactions are gone).
CREATE VIEW reporting.verdict_history AS
SELECT
  x.order_id,
  x.run_id,
  r.as_of,
  r.kind AS run_kind,
  CASE WHEN x.before_status IS NULL THEN 'first' ELSE 'changed' END AS change,
  x.before_status AS status_before,
  x.status AS status_after,
  x.before_lifecycle AS lifecycle_before,
  x.lifecycle AS lifecycle_after,
  x.currency,
  x.before_expected_minor AS expected_before_minor,
  x.expected_minor AS expected_after_minor,
  x.before_settled_minor AS settled_before_minor,
  x.settled_minor AS settled_after_minor,
  x.before_delta_minor AS delta_before_minor,
  x.delta_minor AS delta_after_minor,
  x.first_seen_at AS first_seen,
  recon.minor_to_unit(x.before_expected_minor, x.currency) AS expected_before,
  recon.minor_to_unit(x.expected_minor, x.currency) AS expected_after,
  recon.minor_to_unit(x.before_settled_minor, x.currency) AS settled_before,
  recon.minor_to_unit(x.settled_minor, x.currency) AS settled_after,
  recon.minor_to_unit(x.before_delta_minor, x.currency) AS delta_before,
  recon.minor_to_unit(x.delta_minor, x.currency) AS delta_after
FROM (
  SELECT v.*,
    lag(v.status) OVER w AS before_status,
    lag(v.lifecycle) OVER w AS before_lifecycle,
    lag(v.expected_minor) OVER w AS before_expected_minor,
    lag(v.settled_minor) OVER w AS before_settled_minor,
    lag(v.delta_minor) OVER w AS before_delta_minor
  FROM recon.verdict_versions v
  WINDOW w AS (PARTITION BY v.order_id ORDER BY v.run_id)
) x
JOIN recon.reconciliation_runs r ON r.run_id = x.run_id AND r.finished_at IS NOT NULL
UNION ALL
SELECT h.order_id, h.until_run_id, r.as_of, r.kind, 'removed', h.status, NULL, h.lifecycle, NULL, h.currency,
  h.expected_minor, NULL, h.settled_minor, NULL, h.delta_minor, NULL, h.first_seen_at,
  recon.minor_to_unit(h.expected_minor, h.currency), NULL, recon.minor_to_unit(h.settled_minor, h.currency), NULL,
  recon.minor_to_unit(h.delta_minor, h.currency), NULL
FROM recon.verdict_history h
JOIN recon.reconciliation_runs r ON r.run_id = h.until_run_id AND r.finished_at IS NOT NULL
WHERE NOT EXISTS (SELECT 1 FROM recon.verdict_versions n WHERE n.order_id = h.order_id AND n.run_id = h.until_run_id);

COMMENT ON VIEW reporting.verdict_history IS
  'Every change of an order''s verdict, one row per change: its first verdict, each run that found a different status, lifecycle or amounts, and the run that no longer judged an ORDERID (change = removed). Filter by order_id; runs that found the same verdict add no row.';
COMMENT ON COLUMN reporting.verdict_history.order_id IS 'The order id (ORDERID).';
COMMENT ON COLUMN reporting.verdict_history.run_id IS 'The run that found the change (reporting.runs.run_id).';
COMMENT ON COLUMN reporting.verdict_history.as_of IS 'That run''s as_of, timestamptz.';
COMMENT ON COLUMN reporting.verdict_history.run_kind IS 'What started that run: nightly, backfill or manual.';
COMMENT ON COLUMN reporting.verdict_history.change IS 'first (the order''s first verdict), changed (a different verdict than before) or removed (the ORDERID is no longer judged: an unknown ORDERID whose succeeded transactions are gone).';
COMMENT ON COLUMN reporting.verdict_history.status_before IS 'The status before the change; null for the first verdict.';
COMMENT ON COLUMN reporting.verdict_history.status_after IS 'The status from this run on; null when removed.';
COMMENT ON COLUMN reporting.verdict_history.lifecycle_before IS 'The lifecycle before the change (new, persisting, resolved or null).';
COMMENT ON COLUMN reporting.verdict_history.lifecycle_after IS 'The lifecycle from this run on: a status that stays the same still changes its lifecycle once (new becomes persisting, resolved becomes null).';
COMMENT ON COLUMN reporting.verdict_history.currency IS 'ISO 4217 currency code of the amounts.';
COMMENT ON COLUMN reporting.verdict_history.expected_before_minor IS 'What the order should have settled, before the change, in minor units of currency.';
COMMENT ON COLUMN reporting.verdict_history.expected_after_minor IS 'What the order should have settled, from this run on, in minor units of currency.';
COMMENT ON COLUMN reporting.verdict_history.settled_before_minor IS 'What the service had settled, before the change, in minor units of currency.';
COMMENT ON COLUMN reporting.verdict_history.settled_after_minor IS 'What the service had settled, from this run on, in minor units of currency.';
COMMENT ON COLUMN reporting.verdict_history.delta_before_minor IS 'settled - expected before the change, in minor units of currency.';
COMMENT ON COLUMN reporting.verdict_history.delta_after_minor IS 'settled - expected from this run on, in minor units of currency.';
COMMENT ON COLUMN reporting.verdict_history.first_seen IS 'For an exception, as_of of the run in which it first appeared, timestamptz.';
COMMENT ON COLUMN reporting.verdict_history.expected_before IS 'expected_before_minor in the currency''s unit, exact (numeric: 12.34 EUR, 1500 JPY, 1.234 KWD).';
COMMENT ON COLUMN reporting.verdict_history.expected_after IS 'expected_after_minor in the currency''s unit, exact (numeric).';
COMMENT ON COLUMN reporting.verdict_history.settled_before IS 'settled_before_minor in the currency''s unit, exact (numeric).';
COMMENT ON COLUMN reporting.verdict_history.settled_after IS 'settled_after_minor in the currency''s unit, exact (numeric).';
COMMENT ON COLUMN reporting.verdict_history.delta_before IS 'delta_before_minor in the currency''s unit, exact (numeric).';
COMMENT ON COLUMN reporting.verdict_history.delta_after IS 'delta_after_minor in the currency''s unit, exact (numeric).';
