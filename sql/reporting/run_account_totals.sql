-- A run's bridge per account: what each account settled for the orders the run judged, through the succeeded
-- transactions its verdicts considered, as the run read them (written when it finishes:
-- src/reconcile/run-account-totals.ts). Expected money belongs to an order, not to an account: it stays in
-- reporting.run_totals.
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
  recon.minor_to_unit(s.paid_minor - s.refunded_minor, s.currency) AS settled,
  s.fees_minor,
  recon.minor_to_unit(s.fees_minor, s.currency) AS fees
FROM recon.run_account_totals s
LEFT JOIN recon.accounts a ON a.identifier = s.identifier
ORDER BY s.run_id, s.identifier, s.currency;

COMMENT ON VIEW reporting.run_account_totals IS
  'The bridge of every finished run per processing account and currency: what each account settled for the run''s orders (succeeded transactions of its verdicts, as the run read them). Filter by run_id; its rows of a currency add up to the settled of reporting.run_totals, except for currency_mismatch orders (whose settled counts their order''s currency only).';
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
COMMENT ON COLUMN reporting.run_account_totals.fees_minor IS 'The service''s fees (BILLINGFEES INCL. VAT) of those succeeded transactions, in minor units of currency.';
COMMENT ON COLUMN reporting.run_account_totals.fees IS 'fees_minor in the currency''s unit, exact (numeric).';
