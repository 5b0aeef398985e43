-- reporting.run_status_totals counts a verdict without a currency under XXX, as the bridge does (recon.run_totals,
-- whose currency is never null): an unknown ORDERID paid without a CURRENCY otherwise made a part with a null
-- currency that no run_totals row joins, and the parts of XXX no longer added up to their total. The view as 0022
-- made it otherwise; CREATE OR REPLACE keeps its columns, their comments and its grants.
CREATE OR REPLACE VIEW reporting.run_status_totals AS
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

COMMENT ON COLUMN reporting.run_status_totals.currency IS
  'ISO 4217 currency code of the amounts; XXX for verdicts without a currency, as in reporting.run_totals.';
