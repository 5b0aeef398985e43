-- Views read by people: beside every amount in minor units, the same amount in the currency's unit (12.34 EUR,
-- 1500 JPY, 1.234 KWD) as an exact numeric, named as the *_minor column without its suffix (expected beside
-- expected_minor). reporting.runs.tolerance_minor keeps no companion: a run's tolerance has no currency, it applies
-- in the minor units of each currency it judged. Columns are appended: CREATE OR REPLACE VIEW allows nothing else,
-- and readers' queries keep working.

-- 1234 EUR -> 12.34, 1500 JPY -> 1500, 1234 KWD -> 1.234, by the ISO 4217 exponent recon uses everywhere (2 for a
-- missing or unknown code): the table of recon.format_money, kept in step with packages/protocol's by a test.
-- Numeric division by a power of ten is exact at these scales; the rounding only sets the scale to the exponent.
-- PL/pgSQL as format_money: a SQL body is parsed as the reader, who may not use schema recon.
CREATE FUNCTION recon.minor_to_unit(amount bigint, currency text) RETURNS numeric
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $$
DECLARE
  exponent integer := CASE upper(btrim(currency))
    WHEN 'BIF' THEN 0 WHEN 'CLP' THEN 0 WHEN 'DJF' THEN 0 WHEN 'GNF' THEN 0 WHEN 'ISK' THEN 0 WHEN 'JPY' THEN 0
    WHEN 'KMF' THEN 0 WHEN 'KRW' THEN 0 WHEN 'PYG' THEN 0 WHEN 'RWF' THEN 0 WHEN 'UGX' THEN 0 WHEN 'UYI' THEN 0
    WHEN 'VND' THEN 0 WHEN 'VUV' THEN 0 WHEN 'XAF' THEN 0 WHEN 'XOF' THEN 0 WHEN 'XPF' THEN 0
    WHEN 'BHD' THEN 3 WHEN 'IQD' THEN 3 WHEN 'JOD' THEN 3 WHEN 'KWD' THEN 3 WHEN 'LYD' THEN 3 WHEN 'OMR' THEN 3
    WHEN 'TND' THEN 3
    WHEN 'CLF' THEN 4 WHEN 'UYW' THEN 4
    ELSE 2 END;
BEGIN
  RETURN round(amount::numeric / (10::numeric ^ exponent), exponent);
END
$$;

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
  recon.minor_to_unit(t.fees_minor, t.currency) AS fees
FROM recon.transactions t
JOIN recon.files f ON f.file_id = t.file_id;

COMMENT ON COLUMN reporting.transactions.amount IS 'amount_minor in the currency''s unit, exact (numeric: 12.34 EUR, 1500 JPY, 1.234 KWD).';
COMMENT ON COLUMN reporting.transactions.fees IS 'fees_minor in the currency''s unit, exact (numeric).';

CREATE OR REPLACE VIEW reporting.orders AS
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
  o.line,
  recon.minor_to_unit(o.amount_minor, o.currency) AS amount,
  recon.minor_to_unit(o.refunded_minor, o.currency) AS refunded
FROM recon.orders o
JOIN recon.order_imports i ON i.import_id = o.import_id;

COMMENT ON COLUMN reporting.orders.amount IS 'amount_minor in the currency''s unit, exact (numeric: 12.34 EUR, 1500 JPY, 1.234 KWD).';
COMMENT ON COLUMN reporting.orders.refunded IS 'refunded_minor in the currency''s unit, exact (numeric).';

-- The money a verdict puts at risk, by its status. The verdict's own amounts decide, and for the capture and
-- approval rules the authorization figures its stored explanation holds (every verdict but matched stores them);
-- null where they are missing rather than a reassuring 0. A SQL expression over built-ins only: inlined, and a
-- reader may call it although schema recon is closed to them.
CREATE FUNCTION recon.at_risk_minor(status text, expected bigint, settled bigint, delta bigint, figures jsonb)
RETURNS bigint LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT CASE status
    WHEN 'matched' THEN 0
    WHEN 'pending' THEN 0
    -- Authorized and never captured: what the authorization would have brought.
    -- (CASE, not greatest(), which would turn missing figures into 0.)
    WHEN 'capture_at_risk' THEN CASE WHEN (figures ->> 'authorized')::bigint - (figures ->> 'paid')::bigint < 0 THEN 0 ELSE (figures ->> 'authorized')::bigint - (figures ->> 'paid')::bigint END
    WHEN 'capture_expired' THEN CASE WHEN (figures ->> 'authorized')::bigint - (figures ->> 'paid')::bigint < 0 THEN 0 ELSE (figures ->> 'authorized')::bigint - (figures ->> 'paid')::bigint END
    -- Never approved: what was authorized and not captured, or what the order still expects, the larger.
    WHEN 'approval_expired' THEN CASE WHEN (figures ->> 'authorized')::bigint - (figures ->> 'paid')::bigint IS NOT NULL THEN greatest((figures ->> 'authorized')::bigint - (figures ->> 'paid')::bigint, expected - settled, 0) END
    WHEN 'missing_at_provider' THEN expected
    -- Refunded beyond what was paid.
    WHEN 'over_refunded' THEN CASE WHEN (figures ->> 'refunded')::bigint - (figures ->> 'paid')::bigint < 0 THEN 0
      ELSE (figures ->> 'refunded')::bigint - (figures ->> 'paid')::bigint END
    -- Taken beyond what the order expects: what is owed back.
    WHEN 'duplicate_payment' THEN greatest(settled - expected, 0)
    -- amount_mismatch, status_mismatch, currency_mismatch, notification_conflict, unknown_order.
    ELSE abs(delta)
  END
$$;

CREATE OR REPLACE VIEW reporting.reconciliation AS
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
    'warnings', to_jsonb(coalesce(v.warnings, '{}'::text[])),
    'figures', jsonb_build_object(
      'settled', v.settled_minor::text, 'expected', v.expected_minor::text, 'delta', v.delta_minor::text,
      'tolerance', r.tolerance_minor::text),
    'assembled_on_read', true
  )) || jsonb_build_object('transactions', (
    SELECT coalesce(jsonb_agg(recon.explained_transaction(t, f.name)
        || CASE WHEN t.updated_at > r.started_at THEN '{"changed_after_run": true}'::jsonb ELSE '{}'::jsonb END
      ORDER BY t.occurred_at, t.transaction_id), '[]'::jsonb)
    FROM recon.transactions t LEFT JOIN recon.files f ON f.file_id = t.file_id
    WHERE t.transaction_id = ANY (v.transaction_ids))) AS explanation,
  recon.minor_to_unit(v.expected_minor, v.currency) AS expected,
  recon.minor_to_unit(v.settled_minor, v.currency) AS settled,
  recon.minor_to_unit(v.delta_minor, v.currency) AS delta,
  recon.at_risk_minor(v.status, v.expected_minor, v.settled_minor, v.delta_minor, v.explanation -> 'figures')
    AS at_risk_minor,
  recon.minor_to_unit(recon.at_risk_minor(v.status, v.expected_minor, v.settled_minor, v.delta_minor,
    v.explanation -> 'figures'), v.currency) AS at_risk
FROM recon.current_verdicts v
JOIN recon.reconciliation_runs r ON r.run_id = v.run_id;

COMMENT ON COLUMN reporting.reconciliation.expected IS 'expected_minor in the currency''s unit, exact (numeric: 12.34 EUR, 1500 JPY, 1.234 KWD).';
COMMENT ON COLUMN reporting.reconciliation.settled IS 'settled_minor in the currency''s unit, exact (numeric).';
COMMENT ON COLUMN reporting.reconciliation.delta IS 'delta_minor in the currency''s unit, exact (numeric).';
COMMENT ON COLUMN reporting.reconciliation.at_risk_minor IS
  'The money the verdict puts at risk, in minor units of currency: 0 for matched and pending; the authorized amount not captured for capture_at_risk and capture_expired; that or what the order still expects (expected - settled), the larger, for approval_expired; expected for missing_at_provider; refunded - paid for over_refunded; settled - expected for duplicate_payment; the absolute delta for every other status (amount_mismatch, status_mismatch, currency_mismatch, notification_conflict, unknown_order). Null when the authorization figures it needs are missing.';
COMMENT ON COLUMN reporting.reconciliation.at_risk IS 'at_risk_minor in the currency''s unit, exact (numeric).';

-- The age an accountant means is the order's, not the exception's: an order first judged a month after it was
-- placed is a month old on the day recon first flags it.
CREATE OR REPLACE VIEW reporting.exceptions AS
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
  c.explanation,
  c.explanation ->> 'reason' AS reason,
  floor(extract(epoch FROM now() - o.created_at) / 86400)::integer AS order_age_days,
  c.expected,
  c.settled,
  c.delta,
  recon.minor_to_unit(o.amount_minor, o.currency) AS order_amount,
  c.at_risk_minor,
  c.at_risk
FROM reporting.reconciliation c
LEFT JOIN recon.orders o ON o.order_id = c.order_id
WHERE c.status NOT IN ('matched', 'pending')
ORDER BY c.first_seen, c.order_id;

COMMENT ON COLUMN reporting.exceptions.reason IS 'Why, in one sentence (the explanation''s reason, amounts written in the currency''s unit).';
COMMENT ON COLUMN reporting.exceptions.order_age_days IS 'Whole days (24-hour periods, rounded down) from the order''s creation to now, the moment of the query; null for an unknown ORDERID. age_days counts from first_seen instead.';
COMMENT ON COLUMN reporting.exceptions.expected IS 'expected_minor in the currency''s unit, exact (numeric: 12.34 EUR, 1500 JPY, 1.234 KWD).';
COMMENT ON COLUMN reporting.exceptions.settled IS 'settled_minor in the currency''s unit, exact (numeric).';
COMMENT ON COLUMN reporting.exceptions.delta IS 'delta_minor in the currency''s unit, exact (numeric).';
COMMENT ON COLUMN reporting.exceptions.at_risk_minor IS
  'The money the exception puts at risk, in minor units of currency (the rule per status: reporting.reconciliation.at_risk_minor).';
COMMENT ON COLUMN reporting.exceptions.at_risk IS 'at_risk_minor in the currency''s unit, exact (numeric).';
COMMENT ON COLUMN reporting.exceptions.order_amount IS 'order_amount_minor in the currency''s unit (the order''s currency), exact (numeric); null for an unknown ORDERID.';

CREATE OR REPLACE VIEW reporting.daily_summary AS
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

COMMENT ON COLUMN reporting.daily_summary.expected IS 'expected_minor in the currency''s unit, exact (numeric: 12.34 EUR, 1500 JPY, 1.234 KWD).';
COMMENT ON COLUMN reporting.daily_summary.settled IS 'settled_minor in the currency''s unit, exact (numeric).';

CREATE OR REPLACE VIEW reporting.run_totals AS
SELECT
  t.run_id,
  t.currency,
  t.orders,
  t.unknown_orders,
  t.expected_minor,
  t.settled_minor,
  recon.minor_to_unit(t.expected_minor, t.currency) AS expected,
  recon.minor_to_unit(t.settled_minor, t.currency) AS settled
FROM recon.run_totals t;

COMMENT ON COLUMN reporting.run_totals.expected IS 'expected_minor in the currency''s unit, exact (numeric: 12.34 EUR, 1500 JPY, 1.234 KWD).';
COMMENT ON COLUMN reporting.run_totals.settled IS 'settled_minor in the currency''s unit, exact (numeric).';

CREATE OR REPLACE VIEW reporting.verdict_history AS
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

COMMENT ON COLUMN reporting.verdict_history.expected_before IS 'expected_before_minor in the currency''s unit, exact (numeric: 12.34 EUR, 1500 JPY, 1.234 KWD).';
COMMENT ON COLUMN reporting.verdict_history.expected_after IS 'expected_after_minor in the currency''s unit, exact (numeric).';
COMMENT ON COLUMN reporting.verdict_history.settled_before IS 'settled_before_minor in the currency''s unit, exact (numeric).';
COMMENT ON COLUMN reporting.verdict_history.settled_after IS 'settled_after_minor in the currency''s unit, exact (numeric).';
COMMENT ON COLUMN reporting.verdict_history.delta_before IS 'delta_before_minor in the currency''s unit, exact (numeric).';
COMMENT ON COLUMN reporting.verdict_history.delta_after IS 'delta_after_minor in the currency''s unit, exact (numeric).';

-- Money moved: what the service did per day and currency, whatever the books say. A day is a date in a time zone,
-- which a view cannot take as an argument: it reads the session's recon.report_timezone (default UTC), which an
-- accountant sets with SET (or an operator per login with ALTER ROLE ... SET) and recon sets for its own reads.
-- Days summed per UTC day could not be regrouped into another zone's days afterwards; a function taking the zone
-- would run as its caller, who may not read schema recon.
CREATE VIEW reporting.settlement_daily AS
SELECT
  s.day,
  s.time_zone,
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
    (t.occurred_at AT TIME ZONE z.zone)::date AS day,
    z.zone AS time_zone,
    t.currency,
    count(*)::integer AS transactions,
    count(*) FILTER (WHERE t.op IN ('payment', 'capture'))::integer AS payments,
    count(*) FILTER (WHERE t.op = 'refund')::integer AS refunds,
    coalesce(sum(t.amount_minor) FILTER (WHERE t.op IN ('payment', 'capture')), 0)::bigint AS paid_minor,
    coalesce(sum(t.amount_minor) FILTER (WHERE t.op = 'refund'), 0)::bigint AS refunded_minor,
    coalesce(sum(t.fees_minor), 0)::bigint AS fees_minor
  FROM (
    SELECT occurred_at, currency, amount_minor, fees_minor, lower(btrim(operation_type)) AS op
    FROM recon.transactions
    WHERE exec_code = '0000' AND occurred_at IS NOT NULL
  ) t
  CROSS JOIN (SELECT coalesce(nullif(current_setting('recon.report_timezone', true), ''), 'UTC') AS zone) z
  GROUP BY 1, 2, 3
) s
ORDER BY s.day, s.currency;

COMMENT ON VIEW reporting.settlement_daily IS
  'The money the service moved, per day of the transaction and currency: succeeded transactions only (exec_code 0000), whatever order they belong to. Days are dates in the session''s recon.report_timezone (SET recon.report_timezone = ''Europe/Paris''), UTC by default.';
COMMENT ON COLUMN reporting.settlement_daily.day IS 'The date of the transactions (occurred_at) in time_zone.';
COMMENT ON COLUMN reporting.settlement_daily.time_zone IS 'The time zone of day: the session''s recon.report_timezone, UTC when unset.';
COMMENT ON COLUMN reporting.settlement_daily.currency IS 'ISO 4217 currency code of the amounts: amounts of different currencies are never added.';
COMMENT ON COLUMN reporting.settlement_daily.transactions IS 'Number of succeeded transactions of the day, of any operation (authorizations included).';
COMMENT ON COLUMN reporting.settlement_daily.payments IS 'Number of succeeded payments and captures.';
COMMENT ON COLUMN reporting.settlement_daily.refunds IS 'Number of succeeded refunds.';
COMMENT ON COLUMN reporting.settlement_daily.paid_minor IS 'Total of succeeded payments and captures, in minor units of currency.';
COMMENT ON COLUMN reporting.settlement_daily.refunded_minor IS 'Total of succeeded refunds, in minor units of currency.';
COMMENT ON COLUMN reporting.settlement_daily.fees_minor IS 'The service''s fees (BILLINGFEES INCL. VAT) of the day''s succeeded transactions, in minor units of currency.';
COMMENT ON COLUMN reporting.settlement_daily.net_minor IS 'paid_minor - refunded_minor - fees_minor: what reached the merchant, in minor units of currency.';
COMMENT ON COLUMN reporting.settlement_daily.paid IS 'paid_minor in the currency''s unit, exact (numeric: 12.34 EUR, 1500 JPY, 1.234 KWD).';
COMMENT ON COLUMN reporting.settlement_daily.refunded IS 'refunded_minor in the currency''s unit, exact (numeric).';
COMMENT ON COLUMN reporting.settlement_daily.fees IS 'fees_minor in the currency''s unit, exact (numeric).';
COMMENT ON COLUMN reporting.settlement_daily.net IS 'net_minor in the currency''s unit, exact (numeric).';

-- The difference explained: a run's bridge per currency broken down by status, so that offsetting errors (a
-- status_mismatch of +556.99 against an amount_mismatch of -509.80) no longer hide each other in one total. Read
-- from the run's verdicts as the run gave them (the versions that held at it, within its scope, as
-- reporting.run_orders lists it), so the parts of a finished run add up to its reporting.run_totals row; a run
-- cut short has no bridge and no rows here.
CREATE VIEW reporting.run_status_totals AS
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
JOIN recon.verdict_versions v ON v.order_id = s.order_id
  AND v.run_id <= s.run_id AND (v.until_run_id IS NULL OR v.until_run_id > s.run_id)
GROUP BY s.run_id, v.currency, v.status
ORDER BY s.run_id, v.currency, v.status;

COMMENT ON VIEW reporting.run_status_totals IS
  'The bridge of every finished run broken down by status, one row per run, currency and status: what each kind of verdict expected and settled. The rows of a run and currency add up to its reporting.run_totals row; filter by run_id.';
COMMENT ON COLUMN reporting.run_status_totals.run_id IS 'The run (reporting.runs.run_id).';
COMMENT ON COLUMN reporting.run_status_totals.currency IS 'ISO 4217 currency code of the amounts.';
COMMENT ON COLUMN reporting.run_status_totals.status IS 'The verdict''s status (see reporting.reconciliation.status).';
COMMENT ON COLUMN reporting.run_status_totals.verdicts IS 'Number of the run''s verdicts with this status in this currency: orders plus unknown ORDERIDs.';
COMMENT ON COLUMN reporting.run_status_totals.orders IS 'Number of the merchant''s orders among them.';
COMMENT ON COLUMN reporting.run_status_totals.unknown_orders IS 'Number of unknown ORDERIDs (transactions without an order) among them.';
COMMENT ON COLUMN reporting.run_status_totals.expected_minor IS 'Total those verdicts expected to settle, in minor units of currency.';
COMMENT ON COLUMN reporting.run_status_totals.settled_minor IS 'Total the service settled for them, in minor units of currency.';
COMMENT ON COLUMN reporting.run_status_totals.delta_minor IS 'Sum of their delta_minor (for an authorized order: authorized - amount), in minor units of currency; differs from difference_minor only where a verdict''s delta is not settled - expected.';
COMMENT ON COLUMN reporting.run_status_totals.difference_minor IS 'settled_minor - expected_minor: this status''s share of the run''s difference, in minor units of currency.';
COMMENT ON COLUMN reporting.run_status_totals.expected IS 'expected_minor in the currency''s unit, exact (numeric: 12.34 EUR, 1500 JPY, 1.234 KWD).';
COMMENT ON COLUMN reporting.run_status_totals.settled IS 'settled_minor in the currency''s unit, exact (numeric).';
COMMENT ON COLUMN reporting.run_status_totals.delta IS 'delta_minor in the currency''s unit, exact (numeric).';
COMMENT ON COLUMN reporting.run_status_totals.difference IS 'difference_minor in the currency''s unit, exact (numeric).';

-- Exceptions with their money and age: how old the open exceptions are, counted from the order's creation.
CREATE VIEW reporting.exception_ageing AS
SELECT
  e.status,
  e.currency,
  b.age_bucket,
  b.min_days,
  b.max_days,
  count(*)::integer AS exceptions,
  sum(e.at_risk_minor)::bigint AS at_risk_minor,
  recon.minor_to_unit(sum(e.at_risk_minor)::bigint, e.currency) AS at_risk,
  count(*) FILTER (WHERE e.at_risk_minor IS NULL)::integer AS at_risk_unknown
FROM reporting.exceptions e
CROSS JOIN LATERAL (
  SELECT CASE
      WHEN e.order_age_days IS NULL THEN 'no order'
      WHEN e.order_age_days <= 3 THEN '0-3'
      WHEN e.order_age_days <= 7 THEN '4-7'
      WHEN e.order_age_days <= 30 THEN '8-30'
      ELSE 'over 30' END AS age_bucket,
    CASE
      WHEN e.order_age_days IS NULL THEN NULL
      WHEN e.order_age_days <= 3 THEN 0
      WHEN e.order_age_days <= 7 THEN 4
      WHEN e.order_age_days <= 30 THEN 8
      ELSE 31 END AS min_days,
    CASE
      WHEN e.order_age_days IS NULL THEN NULL
      WHEN e.order_age_days <= 3 THEN 3
      WHEN e.order_age_days <= 7 THEN 7
      WHEN e.order_age_days <= 30 THEN 30 END AS max_days
) b
GROUP BY e.status, e.currency, b.age_bucket, b.min_days, b.max_days
ORDER BY e.status, e.currency, b.min_days NULLS LAST;

COMMENT ON VIEW reporting.exception_ageing IS
  'The open exceptions by status, currency and age of their order (0-3, 4-7, 8-30, over 30 days since the order was created; no order for an unknown ORDERID), counted and with the money they put at risk.';
COMMENT ON COLUMN reporting.exception_ageing.status IS 'The exception (see reporting.reconciliation.status).';
COMMENT ON COLUMN reporting.exception_ageing.currency IS 'ISO 4217 currency code of the amounts.';
COMMENT ON COLUMN reporting.exception_ageing.age_bucket IS 'The order''s age in whole days (reporting.exceptions.order_age_days): 0-3, 4-7, 8-30 or over 30; no order for an unknown ORDERID.';
COMMENT ON COLUMN reporting.exception_ageing.min_days IS 'The bucket''s first day of age (0, 4, 8, 31); null for no order.';
COMMENT ON COLUMN reporting.exception_ageing.max_days IS 'The bucket''s last day of age (3, 7, 30); null for over 30 and for no order.';
COMMENT ON COLUMN reporting.exception_ageing.exceptions IS 'Number of open exceptions in the bucket.';
COMMENT ON COLUMN reporting.exception_ageing.at_risk_minor IS 'The money they put at risk (reporting.exceptions.at_risk_minor), in minor units of currency.';
COMMENT ON COLUMN reporting.exception_ageing.at_risk IS 'at_risk_minor in the currency''s unit, exact (numeric).';
COMMENT ON COLUMN reporting.exception_ageing.at_risk_unknown IS 'Number of exceptions in the bucket whose money at risk is unknown (their figures are missing): at_risk_minor leaves them out.';
