-- Money at risk where the order expects nothing yet: an order the merchant holds as authorized expects no settled
-- money (expected 0), so an authorization the service never made (missing_at_provider) or never approved
-- (approval_expired) read 0.00 at risk, though the whole order is. The rule takes the order's amount for them; the
-- view reads it only for those verdicts. The five-argument rule is replaced: one rule, one function.
CREATE FUNCTION recon.at_risk_minor(status text, expected bigint, settled bigint, delta bigint, figures jsonb,
  order_amount bigint)
RETURNS bigint LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT CASE status
    WHEN 'matched' THEN 0
    WHEN 'pending' THEN 0
    -- Authorized and never captured: what the authorization would have brought.
    -- (CASE, not greatest(), which would turn missing figures into 0.)
    WHEN 'capture_at_risk' THEN CASE WHEN (figures ->> 'authorized')::bigint - (figures ->> 'paid')::bigint < 0 THEN 0 ELSE (figures ->> 'authorized')::bigint - (figures ->> 'paid')::bigint END
    WHEN 'capture_expired' THEN CASE WHEN (figures ->> 'authorized')::bigint - (figures ->> 'paid')::bigint < 0 THEN 0 ELSE (figures ->> 'authorized')::bigint - (figures ->> 'paid')::bigint END
    -- Never approved: what was authorized and not captured, what the order still expects, or, for an order that
    -- expects nothing yet (authorized), its amount not paid: the largest.
    WHEN 'approval_expired' THEN CASE WHEN (figures ->> 'authorized')::bigint - (figures ->> 'paid')::bigint IS NOT NULL THEN greatest((figures ->> 'authorized')::bigint - (figures ->> 'paid')::bigint, expected - settled, CASE WHEN expected = 0 THEN order_amount - (figures ->> 'paid')::bigint END, 0) END
    -- What the order expects, or its whole amount when it expects nothing yet (authorized: no authorization found).
    WHEN 'missing_at_provider' THEN CASE WHEN expected > 0 THEN expected ELSE order_amount END
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
  recon.at_risk_minor(v.status, v.expected_minor, v.settled_minor, v.delta_minor, v.explanation -> 'figures',
    CASE WHEN v.expected_minor = 0 AND v.status IN ('missing_at_provider', 'approval_expired')
      THEN (SELECT o.amount_minor FROM recon.orders o WHERE o.order_id = v.order_id) END) AS at_risk_minor,
  recon.minor_to_unit(recon.at_risk_minor(v.status, v.expected_minor, v.settled_minor, v.delta_minor,
    v.explanation -> 'figures',
    CASE WHEN v.expected_minor = 0 AND v.status IN ('missing_at_provider', 'approval_expired')
      THEN (SELECT o.amount_minor FROM recon.orders o WHERE o.order_id = v.order_id) END), v.currency) AS at_risk
FROM recon.current_verdicts v
JOIN recon.reconciliation_runs r ON r.run_id = v.run_id;

DROP FUNCTION recon.at_risk_minor(text, bigint, bigint, bigint, jsonb);

COMMENT ON COLUMN reporting.reconciliation.at_risk_minor IS
  'The money the verdict puts at risk, in minor units of currency: 0 for matched and pending; the authorized amount not captured for capture_at_risk and capture_expired; for approval_expired the largest of the authorized amount not captured, what the order still expects (expected - settled) and, for an order that expects nothing yet (authorized), its amount not paid; expected for missing_at_provider, or the order''s amount when it expects nothing yet (an authorized order whose authorization the service does not have); refunded - paid for over_refunded; settled - expected for duplicate_payment; the absolute delta for every other status (amount_mismatch, status_mismatch, currency_mismatch, notification_conflict, unknown_order). Null when the authorization figures it needs are missing.';

-- open_days names what age_days has always counted (since recon first saw the exception), beside order_age_days.
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
  c.at_risk,
  k.holds AS acknowledged,
  CASE WHEN k.holds THEN a.acted_by END AS acknowledged_by,
  CASE WHEN k.holds THEN a.acted_at END AS acknowledged_at,
  n.note AS last_note,
  n.acted_by AS last_note_by,
  n.acted_at AS last_note_at,
  floor(extract(epoch FROM now() - c.first_seen) / 86400)::integer AS open_days
FROM reporting.reconciliation c
LEFT JOIN recon.orders o ON o.order_id = c.order_id
LEFT JOIN (
  SELECT DISTINCT ON (x.order_id) x.order_id, x.action, x.status, x.run_id, x.first_seen, x.acted_by, x.acted_at
  FROM recon.exception_actions x
  WHERE x.action IN ('ack', 'reopen')
  ORDER BY x.order_id, x.action_id DESC
) a ON a.order_id = c.order_id
-- CASE, so that the history is looked at only for an acknowledged exception still of the same status.
CROSS JOIN LATERAL (
  SELECT CASE WHEN a.action = 'ack' AND a.status = c.status AND a.first_seen IS NOT DISTINCT FROM c.first_seen
    THEN NOT EXISTS (SELECT 1 FROM recon.verdict_history h
      WHERE h.order_id = c.order_id AND h.run_id > a.run_id AND h.status <> a.status)
    ELSE false END AS holds
) k
LEFT JOIN (
  SELECT DISTINCT ON (x.order_id) x.order_id, x.note, x.acted_by, x.acted_at
  FROM recon.exception_actions x
  WHERE x.note IS NOT NULL
  ORDER BY x.order_id, x.action_id DESC
) n ON n.order_id = c.order_id
WHERE c.status NOT IN ('matched', 'pending')
ORDER BY c.first_seen, c.order_id;

COMMENT ON COLUMN reporting.exceptions.open_days IS 'Whole days (24-hour periods, rounded down) since recon first saw the exception (first_seen) to now: how long it has been open. The same as age_days, by the name that tells it apart from order_age_days.';

-- Fees are what the service charged, and whether it charges a refused attempt is not known: a fee written on a
-- refused transaction's row is counted, so that net never overstates what reached the merchant. Counts and amounts
-- stay those of succeeded transactions.
CREATE OR REPLACE VIEW reporting.settlement_daily AS
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
    count(*) FILTER (WHERE t.succeeded)::integer AS transactions,
    count(*) FILTER (WHERE t.succeeded AND t.op IN ('payment', 'capture'))::integer AS payments,
    count(*) FILTER (WHERE t.succeeded AND t.op = 'refund')::integer AS refunds,
    coalesce(sum(t.amount_minor) FILTER (WHERE t.succeeded AND t.op IN ('payment', 'capture')), 0)::bigint AS paid_minor,
    coalesce(sum(t.amount_minor) FILTER (WHERE t.succeeded AND t.op = 'refund'), 0)::bigint AS refunded_minor,
    coalesce(sum(t.fees_minor), 0)::bigint AS fees_minor
  FROM (
    SELECT occurred_at, currency, amount_minor, fees_minor, lower(btrim(operation_type)) AS op,
      exec_code = '0000' AS succeeded
    FROM recon.transactions
    WHERE occurred_at IS NOT NULL AND (exec_code = '0000' OR fees_minor <> 0)
  ) t
  CROSS JOIN (SELECT coalesce(nullif(current_setting('recon.report_timezone', true), ''), 'UTC') AS zone) z
  GROUP BY 1, 2, 3
) s
ORDER BY s.day, s.currency;

COMMENT ON VIEW reporting.settlement_daily IS
  'The money the service moved, per day of the transaction and currency: succeeded transactions (exec_code 0000), whatever order they belong to, and the fees charged on any transaction of the day, a refused one included. Days are dates in the session''s recon.report_timezone (SET recon.report_timezone = ''Europe/Paris''), UTC by default.';
COMMENT ON COLUMN reporting.settlement_daily.fees_minor IS 'The service''s fees (BILLINGFEES INCL. VAT) of the day''s transactions, in minor units of currency: those of succeeded transactions and any fee written on a refused one.';
