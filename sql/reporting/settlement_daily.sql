-- Money moved: what the service did per day and currency, whatever the books say. A day is a date in a time zone,
-- which a view cannot take as an argument: it reads the session's recon.report_timezone (default UTC), which an
-- accountant sets with SET (or an operator per login with ALTER ROLE ... SET) and recon sets for its own reads. A
-- function taking the zone would run as its caller, who may not read schema recon.
-- Fees are what the service charged, and whether it charges a refused attempt is not known: a fee written on a refused
-- transaction's row is counted, so that net never overstates what reached the merchant. Counts and amounts stay those
-- of succeeded transactions.
-- The sums come from recon.money_moved, kept per quarter hour as transactions are written (migration 0038): a month
-- reads thousands of rows where it read every transaction. Since 2011 every zone's days start on a quarter hour; before
-- (Newfoundland's changes at 00:01 until 2010, Kiribati's -10:40 until 1979), transactions are read one by one.
CREATE VIEW reporting.settlement_daily AS
-- The zone is read once per query (an InitPlan), not once per row.
WITH z AS (SELECT coalesce(nullif(current_setting('recon.report_timezone', true), ''), 'UTC') AS zone)
SELECT
  s.day,
  (SELECT z.zone FROM z) AS time_zone,
  s.currency,
  s.transactions,
  s.payments,
  s.refunds,
  s.paid_minor,
  s.refunded_minor,
  s.fees_minor,
  s.paid_minor - s.refunded_minor - s.fees_minor AS net_minor,
  recon.minor_to_unit(s.paid_minor, s.currency) AS paid,
  recon.minor_to_unit(s.refunded_minor, s.currency) AS refunded,
  recon.minor_to_unit(s.fees_minor, s.currency) AS fees,
  recon.minor_to_unit(s.paid_minor - s.refunded_minor - s.fees_minor, s.currency) AS net
FROM (
  SELECT
    (q.at AT TIME ZONE (SELECT z.zone FROM z))::date AS day,
    q.currency,
    sum(q.transactions)::integer AS transactions,
    sum(q.payments)::integer AS payments,
    sum(q.refunds)::integer AS refunds,
    coalesce(sum(q.paid_minor), 0)::bigint AS paid_minor,
    coalesce(sum(q.refunded_minor), 0)::bigint AS refunded_minor,
    coalesce(sum(q.fees_minor), 0)::bigint AS fees_minor
  FROM (
    SELECT m.quarter AS at, m.currency, m.counted, m.transactions, m.payments, m.refunds, m.paid_minor,
      m.refunded_minor, m.fees_minor
    FROM recon.money_moved m
    WHERE m.quarter >= timestamptz '2011-01-01 00:00+00'
    UNION ALL
    SELECT t.occurred_at, t.currency, 1, t.succeeded::integer,
      (t.succeeded AND t.op IN ('payment', 'capture'))::integer, (t.succeeded AND t.op = 'refund')::integer,
      CASE WHEN t.succeeded AND t.op IN ('payment', 'capture') THEN t.amount_minor END,
      CASE WHEN t.succeeded AND t.op = 'refund' THEN t.amount_minor END,
      t.fees_minor
    FROM (
      SELECT x.occurred_at, x.currency, x.amount_minor, x.fees_minor, x.exec_code = '0000' AS succeeded,
        lower(btrim(x.operation_type)) AS op
      FROM recon.transactions x
      WHERE x.occurred_at < timestamptz '2011-01-01 00:00+00' AND (x.exec_code = '0000' OR x.fees_minor <> 0)
    ) t
  ) q
  GROUP BY 1, 2
  HAVING sum(q.counted) > 0
) s
ORDER BY s.day, s.currency;

COMMENT ON COLUMN reporting.settlement_daily.day IS 'The date of the transactions (occurred_at) in time_zone.';
COMMENT ON COLUMN reporting.settlement_daily.time_zone IS 'The time zone of day: the session''s recon.report_timezone, UTC when unset.';
COMMENT ON COLUMN reporting.settlement_daily.currency IS 'ISO 4217 currency code of the amounts: amounts of different currencies are never added.';
COMMENT ON COLUMN reporting.settlement_daily.transactions IS 'Number of succeeded transactions of the day, of any operation (authorizations included).';
COMMENT ON COLUMN reporting.settlement_daily.payments IS 'Number of succeeded payments and captures.';
COMMENT ON COLUMN reporting.settlement_daily.refunds IS 'Number of succeeded refunds.';
COMMENT ON COLUMN reporting.settlement_daily.paid_minor IS 'Total of succeeded payments and captures, in minor units of currency.';
COMMENT ON COLUMN reporting.settlement_daily.refunded_minor IS 'Total of succeeded refunds, in minor units of currency.';
COMMENT ON COLUMN reporting.settlement_daily.net_minor IS 'paid_minor - refunded_minor - fees_minor: what reached the merchant, in minor units of currency.';
COMMENT ON COLUMN reporting.settlement_daily.paid IS 'paid_minor in the currency''s unit, exact (numeric: 12.34 EUR, 1500 JPY, 1.234 KWD).';
COMMENT ON COLUMN reporting.settlement_daily.refunded IS 'refunded_minor in the currency''s unit, exact (numeric).';
COMMENT ON COLUMN reporting.settlement_daily.fees IS 'fees_minor in the currency''s unit, exact (numeric).';
COMMENT ON COLUMN reporting.settlement_daily.net IS 'net_minor in the currency''s unit, exact (numeric).';

COMMENT ON VIEW reporting.settlement_daily IS
  'The money the service moved, per day of the transaction and currency: succeeded transactions (exec_code 0000), whatever order they belong to, and the fees charged on any transaction of the day, a refused one included. Days are dates in the session''s recon.report_timezone (SET recon.report_timezone = ''Europe/Paris''), UTC by default.';
COMMENT ON COLUMN reporting.settlement_daily.fees_minor IS 'The service''s fees (BILLINGFEES INCL. VAT) of the day''s transactions, in minor units of currency: those of succeeded transactions and any fee written on a refused one.';
