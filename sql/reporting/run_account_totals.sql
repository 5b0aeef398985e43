-- A run's bridge per account: what each account settled for the orders the run judged, from the transactions of
-- the run's verdicts (the versions that held at it, within its scope, as reporting.run_status_totals reads them).
-- Expected money belongs to an order, not to an account: it stays in reporting.run_totals.
CREATE VIEW reporting.run_account_totals AS
SELECT
  s.run_id,
  s.identifier,
  a.account_group,
  s.currency,
  s.orders,
  s.transactions,
  s.paid_minor,
  s.refunded_minor,
  s.paid_minor - s.refunded_minor AS settled_minor,
  recon.minor_to_unit(s.paid_minor, s.currency) AS paid,
  recon.minor_to_unit(s.refunded_minor, s.currency) AS refunded,
  recon.minor_to_unit(s.paid_minor - s.refunded_minor, s.currency) AS settled
FROM (
  SELECT
    o.run_id,
    t.identifier,
    t.currency,
    count(DISTINCT t.order_id)::integer AS orders,
    count(*)::integer AS transactions,
    coalesce(sum(t.amount_minor) FILTER (WHERE t.op IN ('payment', 'capture')), 0)::bigint AS paid_minor,
    coalesce(sum(t.amount_minor) FILTER (WHERE t.op = 'refund'), 0)::bigint AS refunded_minor
  FROM (SELECT DISTINCT q.run_id, q.order_id FROM reporting.run_orders q) o
  JOIN recon.reconciliation_runs r ON r.run_id = o.run_id AND r.finished_at IS NOT NULL
  JOIN recon.verdict_versions v ON v.order_id = o.order_id
    AND v.run_id <= o.run_id AND (v.until_run_id IS NULL OR v.until_run_id > o.run_id)
  CROSS JOIN LATERAL unnest(v.transaction_ids) AS considered (transaction_id)
  JOIN LATERAL (
    SELECT x.order_id, x.identifier, x.currency, x.amount_minor, lower(btrim(x.operation_type)) AS op
    FROM recon.transactions x
    WHERE x.transaction_id = considered.transaction_id AND x.exec_code = '0000'
  ) t ON true
  GROUP BY o.run_id, t.identifier, t.currency
) s
LEFT JOIN recon.accounts a ON a.identifier = s.identifier
ORDER BY s.run_id, s.identifier, s.currency;

COMMENT ON VIEW reporting.run_account_totals IS
  'The bridge of every finished run per processing account and currency: what each account settled for the run''s orders (succeeded transactions of its verdicts, as they are now). Filter by run_id; its rows of a currency add up to the settled of reporting.run_totals, except for currency_mismatch orders (whose settled counts their order''s currency only).';
COMMENT ON COLUMN reporting.run_account_totals.run_id IS 'The run (reporting.runs.run_id).';
COMMENT ON COLUMN reporting.run_account_totals.identifier IS 'The account''s IDENTIFIER (reporting.accounts); null for transactions of no known account.';
COMMENT ON COLUMN reporting.run_account_totals.account_group IS 'The account''s group as configured; null when none.';
COMMENT ON COLUMN reporting.run_account_totals.currency IS 'ISO 4217 currency code of the transactions: amounts of different currencies are never added.';
COMMENT ON COLUMN reporting.run_account_totals.orders IS 'Number of the run''s orders and unknown ORDERIDs with a succeeded transaction on the account in this currency.';
COMMENT ON COLUMN reporting.run_account_totals.transactions IS 'Number of those succeeded transactions, of any operation.';
COMMENT ON COLUMN reporting.run_account_totals.paid_minor IS 'Total of succeeded payments and captures on the account, in minor units of currency.';
COMMENT ON COLUMN reporting.run_account_totals.refunded_minor IS 'Total of succeeded refunds on the account, in minor units of currency.';
COMMENT ON COLUMN reporting.run_account_totals.settled_minor IS 'paid_minor - refunded_minor: the account''s share of the run''s settled, in minor units of currency.';
COMMENT ON COLUMN reporting.run_account_totals.paid IS 'paid_minor in the currency''s unit, exact (numeric: 12.34 EUR, 1500 JPY, 1.234 KWD).';
COMMENT ON COLUMN reporting.run_account_totals.refunded IS 'refunded_minor in the currency''s unit, exact (numeric).';
COMMENT ON COLUMN reporting.run_account_totals.settled IS 'settled_minor in the currency''s unit, exact (numeric).';
