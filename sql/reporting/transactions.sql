-- Every transaction recon holds, with the file, entry and line it came from, and the account it went through (and
-- that account's group). The personal columns of the export (client e-mail and address, cardholder name) stay out on
-- purpose. Every transaction has its file (recon.keep_referenced_files refuses to delete a file that one points to), so
-- the join is a LEFT JOIN only so that a question that reads no file column does not read the files either.
CREATE VIEW reporting.transactions AS
SELECT
  t.transaction_id,
  t.order_id,
  t.operation_type,
  t.occurred_at,
  t.amount_minor,
  t.currency,
  t.exec_code,
  t.exec_code IS NOT DISTINCT FROM '0000' AS succeeded,
  t.schedule_index,
  t.schedule_count,
  t.retry_index,
  t.retry_count,
  t.card_type,
  t.card_country,
  t.fees_minor,
  f.name AS source_file,
  t.entry AS source_entry,
  t.line AS source_line,
  t.file_id AS source_file_id,
  recon.minor_to_unit(t.amount_minor, t.currency) AS amount,
  recon.minor_to_unit(t.fees_minor, t.currency) AS fees,
  t.identifier,
  (SELECT a.account_group FROM recon.accounts a WHERE a.identifier = t.identifier) AS account_group
FROM recon.transactions t
LEFT JOIN recon.files f ON f.file_id = t.file_id;

COMMENT ON VIEW reporting.transactions IS
  'Every transaction of the payment service as last exported (one row per TRANSACTIONID), with the file and line it was last loaded from.';
COMMENT ON COLUMN reporting.transactions.transaction_id IS 'The service''s TRANSACTIONID: unique per transaction.';
COMMENT ON COLUMN reporting.transactions.order_id IS 'The service''s ORDERID: the merchant''s order the transaction belongs to (reporting.orders.order_id); null when the export had none.';
COMMENT ON COLUMN reporting.transactions.operation_type IS 'The operation (OPERATIONTYPE) as written by the service, e.g. payment, authorization, capture, refund.';
COMMENT ON COLUMN reporting.transactions.occurred_at IS 'When the service executed the transaction (export DATE converted from the export''s time zone), timestamptz.';
COMMENT ON COLUMN reporting.transactions.amount_minor IS 'AMOUNT in minor units of currency (e.g. cents for EUR, yen for JPY).';
COMMENT ON COLUMN reporting.transactions.currency IS 'ISO 4217 currency code of amount_minor and fees_minor.';
COMMENT ON COLUMN reporting.transactions.exec_code IS 'The service''s EXECCODE, 4 digits: 0000 succeeded, 0002 waiting for the cardholder, 0003 waiting for an approval, others refused or failed.';
COMMENT ON COLUMN reporting.transactions.succeeded IS 'True when exec_code is 0000: only succeeded transactions move money in a reconciliation.';
COMMENT ON COLUMN reporting.transactions.schedule_index IS 'Position of this instalment in the payment schedule (n of SCHEDULE [n-m], 1-based); null outside a schedule.';
COMMENT ON COLUMN reporting.transactions.schedule_count IS 'Number of instalments of the payment schedule (m of SCHEDULE [n-m]); null outside a schedule.';
COMMENT ON COLUMN reporting.transactions.retry_index IS 'Attempt number of this retry (n of RETRY [n-m], 1-based); null when not a retry.';
COMMENT ON COLUMN reporting.transactions.retry_count IS 'Number of attempts allowed (m of RETRY [n-m]); null when not a retry.';
COMMENT ON COLUMN reporting.transactions.card_type IS 'Card type as written by the service.';
COMMENT ON COLUMN reporting.transactions.card_country IS 'Country of the card as written by the service.';
COMMENT ON COLUMN reporting.transactions.fees_minor IS 'The service''s fees including VAT (BILLINGFEES INCL. VAT) in minor units of currency.';
COMMENT ON COLUMN reporting.transactions.source_entry IS 'The csv entry inside that file when it is a zip archive; null for gzip, bzip2 and plain csv files.';
COMMENT ON COLUMN reporting.transactions.source_line IS 'Line of the csv (1-based, header is line 1) the transaction was last loaded from.';
COMMENT ON COLUMN reporting.transactions.source_file IS 'Name of the export file the transaction was last loaded from (reporting.files.name); join on source_file_id, since names may repeat.';
COMMENT ON COLUMN reporting.transactions.source_file_id IS 'The export file the transaction was last loaded from: reporting.files.file_id.';
COMMENT ON COLUMN reporting.transactions.amount IS 'amount_minor in the currency''s unit, exact (numeric: 12.34 EUR, 1500 JPY, 1.234 KWD).';
COMMENT ON COLUMN reporting.transactions.fees IS 'fees_minor in the currency''s unit, exact (numeric).';
COMMENT ON COLUMN reporting.transactions.identifier IS 'The IDENTIFIER of the processing account the transaction went through (the export''s IDENTIFIER column, else the account that asked for the export); null when unknown.';
COMMENT ON COLUMN reporting.transactions.account_group IS 'The group of that account as recon is configured (RECON_ACCOUNTS); null when it has none or is not configured.';
