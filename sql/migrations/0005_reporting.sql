-- The accountants' reporting schema: views only, over recon's tables, for their own SQL tools.
-- recon never writes here. The views run with their owner's rights, so a reader needs SELECT on them and
-- nothing on recon (0006 grants exactly that). Money is bigint minor units everywhere, as in recon;
-- timestamps are timestamptz (shown in the session's TimeZone, stored as instants).

-- IF NOT EXISTS: migrations are bookkept in schema recon, so a database reset with DROP SCHEMA recon CASCADE
-- loses these views and the record of this file but keeps the (then empty) schema.
CREATE SCHEMA IF NOT EXISTS reporting;

COMMENT ON SCHEMA reporting IS
  'recon''s reporting database for accountants: read-only views over the ingested transactions, the merchant''s orders and the reconciliation verdicts. Money is in minor units of currency (bigint), instants are timestamptz.';

-- Transactions ------------------------------------------------------------------------------------------
-- The personal columns of the export (client e-mail and address, cardholder name) stay out on purpose.

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
  t.line AS source_line
FROM recon.transactions t
JOIN recon.files f ON f.file_id = t.file_id;

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
COMMENT ON COLUMN reporting.transactions.source_file IS 'Name of the export file the transaction was last loaded from (reporting.files.name).';
COMMENT ON COLUMN reporting.transactions.source_entry IS 'The csv entry inside that file when it is a zip archive; null for gzip, bzip2 and plain csv files.';
COMMENT ON COLUMN reporting.transactions.source_line IS 'Line of the csv (1-based, header is line 1) the transaction was last loaded from.';

-- Orders ------------------------------------------------------------------------------------------------

CREATE VIEW reporting.orders AS
SELECT
  o.order_id,
  o.amount_minor,
  o.currency,
  o.status,
  o.refunded_minor,
  o.payment_method,
  o.created_at,
  o.updated_at,
  o.import_id,
  i.source AS import_source,
  i.name AS import_name,
  o.line
FROM recon.orders o
JOIN recon.order_imports i ON i.import_id = o.import_id;

COMMENT ON VIEW reporting.orders IS
  'The merchant''s orders as imported (recon import-orders) or synced (recon sync-orders), one row per order, with the import of their last change.';
COMMENT ON COLUMN reporting.orders.order_id IS 'The merchant''s order id, the service''s ORDERID.';
COMMENT ON COLUMN reporting.orders.amount_minor IS 'Order amount in minor units of currency.';
COMMENT ON COLUMN reporting.orders.currency IS 'ISO 4217 currency code of the order.';
COMMENT ON COLUMN reporting.orders.status IS 'The merchant''s order status: paid, authorized, cancelled, refunded or partially_refunded.';
COMMENT ON COLUMN reporting.orders.refunded_minor IS 'Amount refunded according to the merchant, in minor units of currency (0 when none).';
COMMENT ON COLUMN reporting.orders.payment_method IS 'instalment or wallet.';
COMMENT ON COLUMN reporting.orders.created_at IS 'When the order was created, timestamptz.';
COMMENT ON COLUMN reporting.orders.updated_at IS 'When recon last changed this order (import or sync), timestamptz.';
COMMENT ON COLUMN reporting.orders.import_id IS 'The import of the order''s last change (reporting.rejected_rows.import_id for that import''s rejected rows).';
COMMENT ON COLUMN reporting.orders.import_source IS 'What that import read: file (recon import-orders) or database (recon sync-orders).';
COMMENT ON COLUMN reporting.orders.import_name IS 'The file''s path as given, or the merchant database the sync read (host/database).';
COMMENT ON COLUMN reporting.orders.line IS 'Line of the csv the order was last loaded from (1-based, header is line 1); null for a database sync.';

-- Reconciliation ----------------------------------------------------------------------------------------

-- The latest verdict of each order is the first of its (order_id, run_id DESC) index entries. A matched verdict
-- stores no explanation of its own (see 0004): its explanation is assembled here, from the ids of the
-- transactions it considered (as those transactions are now) and its stored figures and warnings, with
-- "assembled_on_read": true. Every other verdict's explanation is the one stored as judged.
CREATE VIEW reporting.reconciliation AS
SELECT
  v.order_id,
  v.known_order,
  v.status,
  v.lifecycle,
  v.expected_minor,
  v.settled_minor,
  v.delta_minor,
  v.currency,
  v.first_seen_at AS first_seen,
  v.run_id,
  r.as_of,
  coalesce(v.explanation, jsonb_build_object(
    'rule', v.status,
    'reason', format('settled %s equals the expected %s%s', recon.format_money(v.settled_minor, v.currency),
      recon.format_money(v.expected_minor, v.currency),
      CASE WHEN v.delta_minor <> 0 THEN ' within the tolerance of ' || recon.format_money(r.tolerance_minor, v.currency) ELSE '' END),
    'transactions', (
      SELECT coalesce(jsonb_agg(recon.explained_transaction(t, f.name) ORDER BY t.occurred_at, t.transaction_id), '[]'::jsonb)
      FROM recon.transactions t LEFT JOIN recon.files f ON f.file_id = t.file_id
      WHERE t.transaction_id = ANY (v.transaction_ids)),
    'warnings', to_jsonb(coalesce(v.warnings, '{}'::text[])),
    'figures', jsonb_build_object(
      'settled', v.settled_minor::text, 'expected', v.expected_minor::text, 'delta', v.delta_minor::text,
      'tolerance', r.tolerance_minor::text),
    'assembled_on_read', true
  )) AS explanation
FROM (
  SELECT DISTINCT ON (order_id) * FROM recon.verdicts ORDER BY order_id, run_id DESC
) v
JOIN recon.reconciliation_runs r ON r.run_id = v.run_id;

COMMENT ON VIEW reporting.reconciliation IS
  'The current state: the latest verdict of every order and of every unknown ORDERID (transactions without an order), whichever run gave it.';
COMMENT ON COLUMN reporting.reconciliation.order_id IS 'The order id (ORDERID) the verdict is about.';
COMMENT ON COLUMN reporting.reconciliation.known_order IS 'False for an ORDERID with succeeded transactions but no order (status unknown_order).';
COMMENT ON COLUMN reporting.reconciliation.status IS 'The verdict: matched or pending (not exceptions), or the exception currency_mismatch, notification_conflict, duplicate_payment, over_refunded, status_mismatch, amount_mismatch, approval_expired, capture_expired, capture_at_risk, missing_at_provider, unknown_order.';
COMMENT ON COLUMN reporting.reconciliation.lifecycle IS 'new (an exception first seen in this run), persisting (an exception seen in an earlier run too), resolved (the first run where an earlier exception no longer is one), or null.';
COMMENT ON COLUMN reporting.reconciliation.expected_minor IS 'What the order should have settled, in minor units of currency (0 for an unknown ORDERID).';
COMMENT ON COLUMN reporting.reconciliation.settled_minor IS 'What the service settled (succeeded payments and captures minus refunds), in minor units of currency.';
COMMENT ON COLUMN reporting.reconciliation.delta_minor IS 'settled_minor - expected_minor (for an authorized order: authorized - amount), in minor units of currency.';
COMMENT ON COLUMN reporting.reconciliation.currency IS 'ISO 4217 currency code of the amounts.';
COMMENT ON COLUMN reporting.reconciliation.first_seen IS 'as_of of the run in which this exception first appeared, timestamptz; null when not an exception.';
COMMENT ON COLUMN reporting.reconciliation.run_id IS 'The run that gave this verdict (reporting.runs.run_id).';
COMMENT ON COLUMN reporting.reconciliation.as_of IS 'That run''s as_of: the instant the verdict''s ages were measured at, timestamptz.';
COMMENT ON COLUMN reporting.reconciliation.explanation IS 'Why (jsonb): the rule that decided and its reason in words, the transactions considered (id, type, EXECCODE, amount, date, source file and line), the figures, warnings that do not change the status. Amounts inside are strings of minor units of currency. Stored as judged for every status but matched; a matched verdict''s is assembled when read from the transactions it considered, as they are now ("assembled_on_read": true).';

CREATE VIEW reporting.exceptions AS
SELECT
  c.order_id,
  c.known_order,
  c.status,
  c.lifecycle,
  c.first_seen,
  floor(extract(epoch FROM now() - c.first_seen) / 86400)::integer AS age_days,
  c.expected_minor,
  c.settled_minor,
  c.delta_minor,
  c.currency,
  o.created_at AS order_created_at,
  o.status AS order_status,
  o.payment_method,
  o.amount_minor AS order_amount_minor,
  c.run_id,
  c.as_of,
  c.explanation
FROM reporting.reconciliation c
LEFT JOIN recon.orders o ON o.order_id = c.order_id
WHERE c.status NOT IN ('matched', 'pending')
ORDER BY c.first_seen, c.order_id;

COMMENT ON VIEW reporting.exceptions IS
  'The open exceptions: orders and unknown ORDERIDs whose latest verdict is neither matched nor pending, oldest first.';
COMMENT ON COLUMN reporting.exceptions.order_id IS 'The order id (ORDERID) of the exception.';
COMMENT ON COLUMN reporting.exceptions.known_order IS 'False for an ORDERID with succeeded transactions but no order (status unknown_order).';
COMMENT ON COLUMN reporting.exceptions.status IS 'The exception (see reporting.reconciliation.status).';
COMMENT ON COLUMN reporting.exceptions.lifecycle IS 'new (first seen in the latest run that judged the order) or persisting (seen in earlier runs too).';
COMMENT ON COLUMN reporting.exceptions.first_seen IS 'as_of of the run in which the exception first appeared, timestamptz.';
COMMENT ON COLUMN reporting.exceptions.age_days IS 'Whole days (24-hour periods, rounded down) from first_seen to now, the moment of the query.';
COMMENT ON COLUMN reporting.exceptions.expected_minor IS 'What the order should have settled, in minor units of currency.';
COMMENT ON COLUMN reporting.exceptions.settled_minor IS 'What the service settled, in minor units of currency.';
COMMENT ON COLUMN reporting.exceptions.delta_minor IS 'settled_minor - expected_minor (for an authorized order: authorized - amount), in minor units of currency.';
COMMENT ON COLUMN reporting.exceptions.currency IS 'ISO 4217 currency code of the amounts.';
COMMENT ON COLUMN reporting.exceptions.order_created_at IS 'When the order was created, timestamptz; null for an unknown ORDERID.';
COMMENT ON COLUMN reporting.exceptions.order_status IS 'The merchant''s order status (paid, authorized, cancelled, refunded, partially_refunded); null for an unknown ORDERID.';
COMMENT ON COLUMN reporting.exceptions.payment_method IS 'The order''s payment method (instalment or wallet); null for an unknown ORDERID.';
COMMENT ON COLUMN reporting.exceptions.order_amount_minor IS 'The order''s amount in minor units of currency; null for an unknown ORDERID.';
COMMENT ON COLUMN reporting.exceptions.run_id IS 'The run that gave the latest verdict (reporting.runs.run_id).';
COMMENT ON COLUMN reporting.exceptions.as_of IS 'That run''s as_of, timestamptz.';
COMMENT ON COLUMN reporting.exceptions.explanation IS 'Why (jsonb, see reporting.reconciliation.explanation). Amounts inside are strings of minor units of currency.';

-- One row per day and currency. Unknown ORDERIDs have no creation date and are left out (see reporting.exceptions).
-- sum(bigint) is numeric in PostgreSQL: cast back so totals stay bigint minor units like every other amount.
CREATE VIEW reporting.daily_summary AS
SELECT
  (o.created_at AT TIME ZONE 'UTC')::date AS day,
  coalesce(v.currency, o.currency) AS currency,
  count(*)::integer AS orders,
  count(*) FILTER (WHERE v.status = 'matched')::integer AS matched,
  count(*) FILTER (WHERE v.status = 'pending')::integer AS pending,
  count(*) FILTER (WHERE v.status NOT IN ('matched', 'pending'))::integer AS exceptions,
  sum(v.expected_minor)::bigint AS expected_minor,
  sum(v.settled_minor)::bigint AS settled_minor
FROM (
  SELECT DISTINCT ON (order_id) * FROM recon.verdicts ORDER BY order_id, run_id DESC
) v
JOIN recon.orders o ON o.order_id = v.order_id
WHERE v.known_order
GROUP BY 1, 2
ORDER BY 1, 2;

COMMENT ON VIEW reporting.daily_summary IS
  'The latest verdicts of the merchant''s orders per day of order creation (UTC) and currency; unknown ORDERIDs are not counted.';
COMMENT ON COLUMN reporting.daily_summary.day IS 'Day the orders were created, as a UTC date.';
COMMENT ON COLUMN reporting.daily_summary.currency IS 'ISO 4217 currency code of the totals: amounts of different currencies are never added.';
COMMENT ON COLUMN reporting.daily_summary.orders IS 'Number of orders with a verdict (matched + pending + exceptions).';
COMMENT ON COLUMN reporting.daily_summary.matched IS 'Number of those orders whose latest verdict is matched.';
COMMENT ON COLUMN reporting.daily_summary.pending IS 'Number of those orders whose latest verdict is pending.';
COMMENT ON COLUMN reporting.daily_summary.exceptions IS 'Number of those orders whose latest verdict is an exception (neither matched nor pending).';
COMMENT ON COLUMN reporting.daily_summary.expected_minor IS 'Total the orders should have settled, in minor units of currency.';
COMMENT ON COLUMN reporting.daily_summary.settled_minor IS 'Total the service settled for them, in minor units of currency.';

-- Runs --------------------------------------------------------------------------------------------------

CREATE VIEW reporting.runs AS
SELECT
  r.run_id,
  r.as_of,
  r.scope,
  r.tolerance_minor,
  r.grace_hours,
  r.started_at,
  r.finished_at,
  r.orders_in_scope,
  r.counts,
  CASE WHEN r.counts IS NOT NULL THEN coalesce((r.counts ->> 'matched')::integer, 0) END AS matched,
  CASE WHEN r.counts IS NOT NULL THEN coalesce((r.counts ->> 'pending')::integer, 0) END AS pending,
  CASE WHEN r.counts IS NOT NULL THEN coalesce(
    (SELECT sum(n.value::integer)::integer FROM jsonb_each_text(r.counts) n WHERE n.key NOT IN ('matched', 'pending')),
    0) END AS exceptions,
  r.suspect,
  r.suspect_reason,
  r.not_found
FROM recon.reconciliation_runs r
ORDER BY r.run_id;

COMMENT ON VIEW reporting.runs IS
  'Every reconciliation run (recon reconcile), oldest first by run_id. Its bridge per currency is in reporting.run_totals.';
COMMENT ON COLUMN reporting.runs.run_id IS 'The run''s id, in the order runs started.';
COMMENT ON COLUMN reporting.runs.as_of IS 'The instant every age of the run was measured at (--as-of, default the start), timestamptz.';
COMMENT ON COLUMN reporting.runs.scope IS 'What the run judged (jsonb): {"kind": "all"}, {"kind": "orders", "order_ids": [...]} or {"kind": "created_since", "since": "..."}.';
COMMENT ON COLUMN reporting.runs.tolerance_minor IS 'Amount tolerance the run used, in minor units of currency.';
COMMENT ON COLUMN reporting.runs.grace_hours IS 'Grace period the run used, in hours.';
COMMENT ON COLUMN reporting.runs.started_at IS 'When the run started (wall clock), timestamptz.';
COMMENT ON COLUMN reporting.runs.finished_at IS 'When the run finished, timestamptz; null while it runs or if it did not finish.';
COMMENT ON COLUMN reporting.runs.orders_in_scope IS 'Orders and unknown ORDERIDs given a verdict: the sum of counts.';
COMMENT ON COLUMN reporting.runs.counts IS 'Number of verdicts per status (jsonb {"matched": n, ...}, one key per status that occurred); null until the run finished.';
COMMENT ON COLUMN reporting.runs.matched IS 'Number of matched verdicts; null until the run finished.';
COMMENT ON COLUMN reporting.runs.pending IS 'Number of pending verdicts; null until the run finished.';
COMMENT ON COLUMN reporting.runs.exceptions IS 'Number of verdicts that are exceptions (neither matched nor pending), unknown ORDERIDs included; null until the run finished.';
COMMENT ON COLUMN reporting.runs.suspect IS 'True when orders in scope expect money but no transaction at all was found: an empty source, not a clean run.';
COMMENT ON COLUMN reporting.runs.suspect_reason IS 'Why the run is suspect, in words; null when it is not.';
COMMENT ON COLUMN reporting.runs.not_found IS 'Order ids asked for (--order-id) that are neither an order nor an ORDERID with transactions.';

CREATE VIEW reporting.run_totals AS
SELECT
  t.run_id,
  t.currency,
  t.orders,
  t.unknown_orders,
  t.expected_minor,
  t.settled_minor
FROM recon.run_totals t;

COMMENT ON VIEW reporting.run_totals IS
  'The bridge of every run, one row per run and currency: amounts of different currencies are never added.';
COMMENT ON COLUMN reporting.run_totals.run_id IS 'The run (reporting.runs.run_id).';
COMMENT ON COLUMN reporting.run_totals.currency IS 'ISO 4217 currency code of the totals.';
COMMENT ON COLUMN reporting.run_totals.orders IS 'Number of the merchant''s orders judged in this currency.';
COMMENT ON COLUMN reporting.run_totals.unknown_orders IS 'Number of unknown ORDERIDs (transactions without an order) judged in this currency.';
COMMENT ON COLUMN reporting.run_totals.expected_minor IS 'Total expected to settle, in minor units of currency.';
COMMENT ON COLUMN reporting.run_totals.settled_minor IS 'Total settled by the service (orders plus unknown ORDERIDs), in minor units of currency.';

-- Files and rejected rows -------------------------------------------------------------------------------

CREATE VIEW reporting.files AS
SELECT
  f.file_id,
  f.name,
  f.sha256,
  f.size_bytes,
  f.compression,
  f.received_at,
  f.finished_at,
  f.status,
  f.rows_total,
  f.rows_inserted,
  f.rows_updated,
  f.rows_unchanged,
  f.rows_rejected,
  f.error_code,
  f.error
FROM recon.files f;

COMMENT ON VIEW reporting.files IS 'Every attempt to ingest an export file (recon ingest), loaded or failed.';
COMMENT ON COLUMN reporting.files.file_id IS 'The attempt''s id.';
COMMENT ON COLUMN reporting.files.name IS 'The file''s path as given to recon ingest.';
COMMENT ON COLUMN reporting.files.sha256 IS 'SHA-256 of the file''s bytes as delivered (hex): the same bytes are loaded at most once.';
COMMENT ON COLUMN reporting.files.size_bytes IS 'Size of the file as delivered (compressed), in bytes.';
COMMENT ON COLUMN reporting.files.compression IS 'Compression detected from the bytes: zip, gzip, bzip2 or none.';
COMMENT ON COLUMN reporting.files.received_at IS 'When the ingest of the file started, timestamptz.';
COMMENT ON COLUMN reporting.files.finished_at IS 'When it ended, timestamptz.';
COMMENT ON COLUMN reporting.files.status IS 'loaded (its rows are in, bad rows in reporting.rejected_rows) or failed (nothing of it was kept).';
COMMENT ON COLUMN reporting.files.rows_total IS 'Number of data rows read.';
COMMENT ON COLUMN reporting.files.rows_inserted IS 'Number of transactions the file added.';
COMMENT ON COLUMN reporting.files.rows_updated IS 'Number of known transactions whose values the file changed.';
COMMENT ON COLUMN reporting.files.rows_unchanged IS 'Number of known transactions the file repeated unchanged.';
COMMENT ON COLUMN reporting.files.rows_rejected IS 'Number of rows rejected (see reporting.rejected_rows).';
COMMENT ON COLUMN reporting.files.error_code IS 'Stable code of the failure (e.g. ARCHIVE_CORRUPT, CSV_HEADER); null when loaded.';
COMMENT ON COLUMN reporting.files.error IS 'Why the file failed, in one line; null when loaded.';

CREATE VIEW reporting.rejected_rows AS
SELECT
  'export'::text AS kind,
  r.rejected_row_id,
  r.file_id,
  NULL::bigint AS import_id,
  f.name AS source_name,
  r.entry,
  r.line,
  r.raw,
  r.reason
FROM recon.rejected_rows r
JOIN recon.files f ON f.file_id = r.file_id
UNION ALL
SELECT
  'orders'::text,
  r.rejected_row_id,
  NULL::bigint,
  r.import_id,
  i.name,
  NULL::text,
  r.line,
  r.raw,
  r.reason
FROM recon.rejected_order_rows r
JOIN recon.order_imports i ON i.import_id = r.import_id;

COMMENT ON VIEW reporting.rejected_rows IS
  'Every row recon could not take, kept with its reason: rows of export files (kind export) and of order imports (kind orders).';
COMMENT ON COLUMN reporting.rejected_rows.kind IS 'export (a row of an export file, recon ingest) or orders (a row of an order import or sync).';
COMMENT ON COLUMN reporting.rejected_rows.rejected_row_id IS 'Id of the rejected row, unique within its kind.';
COMMENT ON COLUMN reporting.rejected_rows.file_id IS 'The export file (reporting.files.file_id) for kind export; null for kind orders.';
COMMENT ON COLUMN reporting.rejected_rows.import_id IS 'The order import (reporting.orders.import_id) for kind orders; null for kind export.';
COMMENT ON COLUMN reporting.rejected_rows.source_name IS 'The export file''s name, or the order import''s name (file path or host/database).';
COMMENT ON COLUMN reporting.rejected_rows.entry IS 'The csv entry inside a zip export; null otherwise.';
COMMENT ON COLUMN reporting.rejected_rows.line IS 'Line of the csv (1-based, header is line 1), or the row''s position in an order sync''s result.';
COMMENT ON COLUMN reporting.rejected_rows.raw IS 'The row as read, unchanged.';
COMMENT ON COLUMN reporting.rejected_rows.reason IS 'Why it was rejected, naming the column.';
