-- Several processing accounts. A merchant may hold several accounts at the service (RECON_ACCOUNTS), each with its
-- IDENTIFIER and secret, some exported together as a group (SCOPE=CLIENTSGROUP). recon.accounts is the list as
-- recon was last started with it (never a secret): reconciliation reads which payment methods each account serves,
-- the views name each account's group. An export request records the account that signed it and its scope.

CREATE TABLE recon.accounts (
  identifier      text PRIMARY KEY CHECK (char_length(identifier) BETWEEN 1 AND 32),
  account_group   text,
  -- The methods the account serves; null: any.
  payment_methods text[] CHECK (payment_methods <@ ARRAY['instalment', 'wallet']),
  -- When the list last changed (an account added or removed, a group or methods changed): a run over all orders
  -- after that judges every order again, its warnings depending on the accounts.
  changed_at      timestamptz NOT NULL DEFAULT now()
);

-- Null for the requests made before accounts were recorded: they were the single account's.
ALTER TABLE recon.export_requests
  ADD COLUMN identifier text,
  ADD COLUMN scope text CHECK (scope IN ('CLIENT', 'CLIENTSGROUP'));

-- Which account a transaction came through, and the account's group, for the accountants.
CREATE OR REPLACE VIEW reporting.transactions AS
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
JOIN recon.files f ON f.file_id = t.file_id;

COMMENT ON COLUMN reporting.transactions.identifier IS 'The IDENTIFIER of the processing account the transaction went through (the export''s IDENTIFIER column, else the account that asked for the export); null when unknown.';
COMMENT ON COLUMN reporting.transactions.account_group IS 'The group of that account as recon is configured (RECON_ACCOUNTS); null when it has none or is not configured.';

CREATE VIEW reporting.accounts AS
SELECT a.identifier, a.account_group, a.payment_methods, a.changed_at
FROM recon.accounts a
ORDER BY a.identifier;

COMMENT ON VIEW reporting.accounts IS
  'The merchant''s processing accounts at the service, as recon was last started with them (RECON_ACCOUNTS; never a secret).';
COMMENT ON COLUMN reporting.accounts.identifier IS 'The account''s IDENTIFIER at the service.';
COMMENT ON COLUMN reporting.accounts.account_group IS 'The group the account is exported with (one request with SCOPE=CLIENTSGROUP); null when none.';
COMMENT ON COLUMN reporting.accounts.payment_methods IS 'The payment methods the account serves (instalment, wallet); null: any. A payment on an account that does not serve its order''s method is a warning on the order''s verdict.';
COMMENT ON COLUMN reporting.accounts.changed_at IS 'When the list of accounts last changed (an account added or removed, a group or methods changed), timestamptz.';

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
