-- How old the open exceptions are, counted from the order's creation: the age an accountant means is the order's, not
-- the exception's (an order first judged a month after it was placed is a month old the day recon first flags it).
-- The columns say order_age so as not to be read as open_days. A bucket ends in ' days': '4-7' and '8-30' alone become
-- dates in a spreadsheet (4 July, 30 August).
CREATE VIEW reporting.exception_ageing AS
SELECT
  e.status,
  e.currency,
  b.order_age_bucket,
  b.min_order_age_days,
  b.max_order_age_days,
  count(*)::integer AS exceptions,
  sum(e.at_risk_minor)::bigint AS at_risk_minor,
  recon.minor_to_unit(sum(e.at_risk_minor)::bigint, e.currency) AS at_risk,
  count(*) FILTER (WHERE e.at_risk_minor IS NULL)::integer AS at_risk_unknown,
  count(*) FILTER (WHERE e.acknowledged)::integer AS acknowledged,
  count(*) FILTER (WHERE NOT e.acknowledged)::integer AS unacknowledged
FROM reporting.exceptions e
-- The age once per exception (OFFSET 0 keeps it a subquery of its own): written out in each branch below, the
-- flattened view computed it up to nine times, a sixth of the view's CPU.
CROSS JOIN LATERAL (SELECT e.order_age_days OFFSET 0) a
CROSS JOIN LATERAL (
  SELECT CASE
      WHEN a.order_age_days IS NULL THEN 'no order'
      WHEN a.order_age_days <= 3 THEN '0-3 days'
      WHEN a.order_age_days <= 7 THEN '4-7 days'
      WHEN a.order_age_days <= 30 THEN '8-30 days'
      ELSE 'over 30 days' END AS order_age_bucket,
    CASE
      WHEN a.order_age_days IS NULL THEN NULL
      WHEN a.order_age_days <= 3 THEN 0
      WHEN a.order_age_days <= 7 THEN 4
      WHEN a.order_age_days <= 30 THEN 8
      ELSE 31 END AS min_order_age_days,
    CASE
      WHEN a.order_age_days IS NULL THEN NULL
      WHEN a.order_age_days <= 3 THEN 3
      WHEN a.order_age_days <= 7 THEN 7
      WHEN a.order_age_days <= 30 THEN 30 END AS max_order_age_days
) b
GROUP BY e.status, e.currency, b.order_age_bucket, b.min_order_age_days, b.max_order_age_days
ORDER BY e.status, e.currency, b.min_order_age_days NULLS LAST;

COMMENT ON VIEW reporting.exception_ageing IS
  'The open exceptions by status, currency and age of their order (0-3 days, 4-7 days, 8-30 days, over 30 days since the order was created, reporting.exceptions.order_age_days; no order for an unknown ORDERID), counted and with the money they put at risk. Not by how long they have been open (open_days).';
COMMENT ON COLUMN reporting.exception_ageing.status IS 'The exception (see reporting.reconciliation.status).';
COMMENT ON COLUMN reporting.exception_ageing.currency IS 'ISO 4217 currency code of the amounts.';
COMMENT ON COLUMN reporting.exception_ageing.order_age_bucket IS 'The order''s age in whole days since its creation (reporting.exceptions.order_age_days): 0-3 days, 4-7 days, 8-30 days or over 30 days; no order for an unknown ORDERID. Text a spreadsheet keeps as text.';
COMMENT ON COLUMN reporting.exception_ageing.min_order_age_days IS 'The bucket''s first day of order age (0, 4, 8, 31); null for no order. Sort by it.';
COMMENT ON COLUMN reporting.exception_ageing.max_order_age_days IS 'The bucket''s last day of order age (3, 7, 30); null for over 30 days and for no order.';
COMMENT ON COLUMN reporting.exception_ageing.exceptions IS 'Number of open exceptions in the bucket.';
COMMENT ON COLUMN reporting.exception_ageing.at_risk_minor IS 'The money they put at risk (reporting.exceptions.at_risk_minor), in minor units of currency.';
COMMENT ON COLUMN reporting.exception_ageing.at_risk IS 'at_risk_minor in the currency''s unit, exact (numeric).';
COMMENT ON COLUMN reporting.exception_ageing.at_risk_unknown IS 'Number of exceptions in the bucket whose money at risk is unknown (their figures are missing): at_risk_minor leaves them out.';
COMMENT ON COLUMN reporting.exception_ageing.acknowledged IS 'Number of exceptions in the bucket an accountant acknowledged (reporting.exceptions.acknowledged).';
COMMENT ON COLUMN reporting.exception_ageing.unacknowledged IS 'Number of exceptions in the bucket not acknowledged: new, reopened, or whose acknowledgement lapsed.';
