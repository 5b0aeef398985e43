-- The current verdict of every order and unknown ORDERID, as finished runs gave it. A matched verdict stores no
-- explanation of its own: it is assembled here from the ids of the transactions it considered (as those transactions
-- are now) and its stored figures and warnings, with "assembled_on_read": true; every other verdict's explanation is
-- the one stored as judged. The transaction list is a subquery here and in src/report/report-queries.ts, not a
-- function: a function with an aggregate is not inlined, and would run as the accountant, who may not read schema recon.
-- The explanation is read through the verdict's key, not carried from the scan, and the reason is the column stored
-- from it (a verdict is matched exactly when it stores no explanation: a check of recon.verdicts): a question that
-- filters and orders on the figures reads them from an index alone and builds explanations only for the rows it
-- returns.
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
  (SELECT coalesce(x.explanation, jsonb_build_object(
    'rule', x.status,
    'reason', m.reason,
    'warnings', to_jsonb(coalesce(x.warnings, '{}'::text[])),
    'figures', jsonb_build_object(
      'settled', x.settled_minor::text, 'expected', x.expected_minor::text, 'delta', x.delta_minor::text,
      'tolerance', r.tolerance_minor::text),
    'assembled_on_read', true
  )) || jsonb_build_object('transactions', (
    SELECT coalesce(jsonb_agg(recon.explained_transaction(t, f.name)
        || CASE WHEN t.updated_at > r.started_at THEN '{"changed_after_run": true}'::jsonb ELSE '{}'::jsonb END
      ORDER BY t.occurred_at, t.transaction_id), '[]'::jsonb)
    FROM recon.transactions t LEFT JOIN recon.files f ON f.file_id = t.file_id
    WHERE t.transaction_id = ANY (x.transaction_ids)))
   FROM recon.verdicts x WHERE x.order_id = v.order_id) AS explanation,
  recon.minor_to_unit(v.expected_minor, v.currency) AS expected,
  recon.minor_to_unit(v.settled_minor, v.currency) AS settled,
  recon.minor_to_unit(v.delta_minor, v.currency) AS delta,
  v.at_risk_minor,
  recon.minor_to_unit(v.at_risk_minor, v.currency) AS at_risk,
  CASE WHEN v.status = 'matched' THEN m.reason ELSE v.reason END AS reason,
  coalesce(v.warnings, '{}'::text[]) AS warnings
FROM recon.current_verdicts v
JOIN recon.reconciliation_runs r ON r.run_id = v.run_id
-- A matched verdict's sentence, which it does not store.
CROSS JOIN LATERAL (
  SELECT CASE WHEN v.status = 'matched' THEN format('settled %s equals the expected %s%s',
    recon.format_money(v.settled_minor, v.currency), recon.format_money(v.expected_minor, v.currency),
    CASE WHEN v.delta_minor <> 0 THEN ' within the tolerance of ' || recon.format_money(r.tolerance_minor, v.currency) ELSE '' END)
  END AS reason
) m;
COMMENT ON COLUMN reporting.reconciliation.order_id IS 'The order id (ORDERID) the verdict is about.';
COMMENT ON COLUMN reporting.reconciliation.known_order IS 'False for an ORDERID with succeeded transactions but no order (status unknown_order).';
COMMENT ON COLUMN reporting.reconciliation.status IS 'The verdict: matched or pending (not exceptions), or the exception currency_mismatch, notification_conflict, duplicate_payment, over_refunded, status_mismatch, amount_mismatch, approval_expired, capture_expired, capture_at_risk, missing_at_provider, unknown_order.';
COMMENT ON COLUMN reporting.reconciliation.lifecycle IS 'As the latest run that judged the order gave it: new (an exception that run saw first), persisting (an exception seen in an earlier run too), resolved (that run found an earlier exception no longer is one), or null.';
COMMENT ON COLUMN reporting.reconciliation.expected_minor IS 'What the order should have settled, in minor units of currency (0 for an unknown ORDERID).';
COMMENT ON COLUMN reporting.reconciliation.settled_minor IS 'What the service settled (succeeded payments and captures minus refunds), in minor units of currency.';
COMMENT ON COLUMN reporting.reconciliation.delta_minor IS 'settled_minor - expected_minor (for an authorized order: authorized - amount), in minor units of currency.';
COMMENT ON COLUMN reporting.reconciliation.currency IS 'ISO 4217 currency code of the amounts.';
COMMENT ON COLUMN reporting.reconciliation.first_seen IS 'as_of of the run in which this exception first appeared, timestamptz; null when not an exception.';
COMMENT ON COLUMN reporting.reconciliation.explanation IS 'Why (jsonb): the rule that decided and its reason in words, the figures, warnings that do not change the status, conflicts, and the transactions considered (id, type, EXECCODE, amount, date, source file and line; "changed_after_run": true on one changed since). Amounts inside are strings of minor units of currency. Rule, reason, figures and warnings are stored as judged for every status but matched, whose are assembled when read ("assembled_on_read": true); the transactions are read from the ids the verdict considered.';

COMMENT ON VIEW reporting.reconciliation IS
  'The current state: the current verdict of every order and of every unknown ORDERID (transactions without an order). Later runs that judged the order and found the same verdict leave it as it is: run_id and as_of are those of the run the verdict holds from.';
COMMENT ON COLUMN reporting.reconciliation.run_id IS 'The run from which this verdict holds (reporting.runs.run_id): the run that found it; later runs that judged the order found the same.';
COMMENT ON COLUMN reporting.reconciliation.as_of IS 'That run''s as_of: the instant the verdict''s ages were measured at, timestamptz.';
COMMENT ON COLUMN reporting.reconciliation.expected IS 'expected_minor in the currency''s unit, exact (numeric: 12.34 EUR, 1500 JPY, 1.234 KWD).';
COMMENT ON COLUMN reporting.reconciliation.settled IS 'settled_minor in the currency''s unit, exact (numeric).';
COMMENT ON COLUMN reporting.reconciliation.delta IS 'delta_minor in the currency''s unit, exact (numeric).';
COMMENT ON COLUMN reporting.reconciliation.at_risk IS 'at_risk_minor in the currency''s unit, exact (numeric).';
COMMENT ON COLUMN reporting.reconciliation.reason IS 'Why, in one sentence (the explanation''s reason, amounts written in the currency''s unit).';
COMMENT ON COLUMN reporting.reconciliation.warnings IS 'What does not change the status but deserves a look (the explanation''s warnings), one sentence each; empty when none. List them with unnest(warnings).';
COMMENT ON COLUMN reporting.reconciliation.at_risk_minor IS
  'The money the verdict puts at risk, in minor units of currency: 0 for matched and pending; the authorized amount not captured for capture_at_risk and capture_expired; for approval_expired the largest of the authorized amount not captured, what the order still expects (expected - settled) and, for an order that expects nothing yet (authorized), its amount not paid; expected for missing_at_provider, or the order''s amount when it expects nothing yet (an authorized order whose authorization the service does not have); refunded - paid for over_refunded; settled - expected for duplicate_payment; the absolute delta for every other status (amount_mismatch, status_mismatch, currency_mismatch, notification_conflict, unknown_order). Written with the verdict, from its figures and the order''s amount as the run read them. Null only for a verdict written before recon stored it whose figures were missing.';
