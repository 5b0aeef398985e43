-- Reconciliation at the speed of the data (issue 6's benchmark).
--
-- A large run now writes its verdicts over several connections at once, each committing its own slice of the
-- ORDERID space, and finishes the run (finished_at) in one last transaction: until then its verdicts must not
-- count. The views that pick the latest verdict of each order pick it among finished runs only. (A run that
-- failed or was cut short is removed with its verdicts, by itself or by the next run.)
--
-- The lifecycle of a run compares each order with its latest earlier verdict, but only an exception matters there:
-- the exceptions' index, keyed by order, finds the orders whose latest exception may still be open without a
-- lookup for each of a million orders.

-- A CHECK of IN (...) compares in order: 'matched', nine verdicts in ten, came twelfth.
ALTER TABLE recon.verdicts DROP CONSTRAINT verdicts_status_check, ADD CONSTRAINT verdicts_status_check CHECK (status IN (
  'matched', 'pending', 'missing_at_provider', 'capture_expired', 'amount_mismatch', 'capture_at_risk',
  'approval_expired', 'status_mismatch', 'duplicate_payment', 'unknown_order', 'currency_mismatch', 'over_refunded',
  'notification_conflict'));

CREATE INDEX verdicts_order_exceptions_idx ON recon.verdicts (order_id, run_id DESC) WHERE status NOT IN ('matched', 'pending');

-- A verdict's explanation lists the transactions it considered, each with its values and the file and line it came
-- from. Stored with every exception, that list cost a run more than the rest of its explanation and half its
-- insert: a verdict now keeps the ids it considered (transaction_ids) and the list is read from them, as a matched
-- verdict's already was. A transaction changed since the run (a re-ingest with other values) says so
-- ("changed_after_run": true); the run's figures stay as judged in the explanation. The list is a subquery here and
-- in src/report/report-queries.ts, not a function: a function with an aggregate is not inlined, and would run its
-- body as the accountant, who may not read schema recon.
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
    WHERE t.transaction_id = ANY (v.transaction_ids))) AS explanation
FROM (
  SELECT DISTINCT ON (order_id) * FROM recon.verdicts
  WHERE run_id IN (SELECT run_id FROM recon.reconciliation_runs WHERE finished_at IS NOT NULL)
  ORDER BY order_id, run_id DESC
) v
JOIN recon.reconciliation_runs r ON r.run_id = v.run_id;

CREATE OR REPLACE VIEW reporting.daily_summary AS
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
  SELECT DISTINCT ON (order_id) * FROM recon.verdicts
  WHERE run_id IN (SELECT run_id FROM recon.reconciliation_runs WHERE finished_at IS NOT NULL)
  ORDER BY order_id, run_id DESC
) v
JOIN recon.orders o ON o.order_id = v.order_id
WHERE v.known_order
GROUP BY 1, 2
ORDER BY 1, 2;

COMMENT ON COLUMN reporting.reconciliation.explanation IS 'Why (jsonb): the rule that decided and its reason in words, the figures, warnings that do not change the status, conflicts, and the transactions considered (id, type, EXECCODE, amount, date, source file and line; "changed_after_run": true on one changed since). Amounts inside are strings of minor units of currency. Rule, reason, figures and warnings are stored as judged for every status but matched, whose are assembled when read ("assembled_on_read": true); the transactions are read from the ids the verdict considered.';
