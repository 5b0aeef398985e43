-- The current verdicts of the merchant's orders per day of order creation (UTC) and currency. Unknown ORDERIDs have no
-- creation date and are left out (reporting.exceptions lists them). sum(bigint) is numeric in PostgreSQL: cast back, so
-- that totals stay bigint minor units like every other amount.
CREATE VIEW reporting.daily_summary AS
SELECT
  (o.created_at AT TIME ZONE 'UTC')::date AS day,
  coalesce(v.currency, o.currency) AS currency,
  count(*)::integer AS orders,
  count(*) FILTER (WHERE v.status = 'matched')::integer AS matched,
  count(*) FILTER (WHERE v.status = 'pending')::integer AS pending,
  count(*) FILTER (WHERE v.status NOT IN ('matched', 'pending'))::integer AS exceptions,
  sum(v.expected_minor)::bigint AS expected_minor,
  sum(v.settled_minor)::bigint AS settled_minor,
  recon.minor_to_unit(sum(v.expected_minor)::bigint, coalesce(v.currency, o.currency)) AS expected,
  recon.minor_to_unit(sum(v.settled_minor)::bigint, coalesce(v.currency, o.currency)) AS settled
FROM recon.current_verdicts v
JOIN recon.orders o ON o.order_id = v.order_id
WHERE v.known_order
GROUP BY 1, 2
ORDER BY 1, 2;
COMMENT ON COLUMN reporting.daily_summary.day IS 'Day the orders were created, as a UTC date.';
COMMENT ON COLUMN reporting.daily_summary.currency IS 'ISO 4217 currency code of the totals: amounts of different currencies are never added.';
COMMENT ON COLUMN reporting.daily_summary.orders IS 'Number of orders with a verdict (matched + pending + exceptions).';
COMMENT ON COLUMN reporting.daily_summary.expected_minor IS 'Total the orders should have settled, in minor units of currency.';
COMMENT ON COLUMN reporting.daily_summary.settled_minor IS 'Total the service settled for them, in minor units of currency.';

COMMENT ON VIEW reporting.daily_summary IS
  'The current verdicts of the merchant''s orders per day of order creation (UTC) and currency; unknown ORDERIDs are not counted.';
COMMENT ON COLUMN reporting.daily_summary.matched IS 'Number of those orders whose current verdict is matched.';
COMMENT ON COLUMN reporting.daily_summary.pending IS 'Number of those orders whose current verdict is pending.';
COMMENT ON COLUMN reporting.daily_summary.exceptions IS 'Number of those orders whose current verdict is an exception (neither matched nor pending).';
COMMENT ON COLUMN reporting.daily_summary.expected IS 'expected_minor in the currency''s unit, exact (numeric: 12.34 EUR, 1500 JPY, 1.234 KWD).';
COMMENT ON COLUMN reporting.daily_summary.settled IS 'settled_minor in the currency''s unit, exact (numeric).';
