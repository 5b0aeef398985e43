-- What accountants sort and filter by is written with the verdict, and what they total per run is written when the
-- run finishes, instead of being derived at every read: at a million orders, reading the money at risk out of each
-- explanation's jsonb (and the order's amount beside it) took the exceptions' queries 5 to 22 s, and a run's bridge
-- per status, read back through every version that held at the run, 13 to 15 s.

-- The money a verdict puts at risk (the rule: sql/reporting/reconciliation.sql, the comment on at_risk_minor),
-- written by the run that writes the verdict.
-- Added with 0, matched and pending verdicts' money at risk, which PostgreSQL records once for the rows there
-- (no row is rewritten): only the exceptions are updated below. New versions always name it.
ALTER TABLE recon.verdicts ADD COLUMN at_risk_minor bigint DEFAULT 0;
ALTER TABLE recon.verdicts ALTER COLUMN at_risk_minor DROP DEFAULT;
ALTER TABLE recon.verdict_history ADD COLUMN at_risk_minor bigint DEFAULT 0;
ALTER TABLE recon.verdict_history ALTER COLUMN at_risk_minor DROP DEFAULT;

-- The versions written before: the rule over the figures their explanation stored and the order's amount, as the
-- views computed it when read (null where the figures it needs are missing), for this migration alone.
CREATE FUNCTION pg_temp.at_risk_minor(status text, expected bigint, settled bigint, delta bigint, figures jsonb,
  order_amount bigint)
RETURNS bigint LANGUAGE sql IMMUTABLE AS $$
  SELECT CASE status
    WHEN 'matched' THEN 0
    WHEN 'pending' THEN 0
    WHEN 'capture_at_risk' THEN CASE WHEN a - p < 0 THEN 0 ELSE a - p END
    WHEN 'capture_expired' THEN CASE WHEN a - p < 0 THEN 0 ELSE a - p END
    WHEN 'approval_expired' THEN CASE WHEN a - p IS NOT NULL
      THEN greatest(a - p, expected - settled, CASE WHEN expected = 0 THEN order_amount - p END, 0) END
    WHEN 'missing_at_provider' THEN CASE WHEN expected > 0 THEN expected ELSE order_amount END
    WHEN 'over_refunded' THEN CASE WHEN r - p < 0 THEN 0 ELSE r - p END
    WHEN 'duplicate_payment' THEN greatest(settled - expected, 0)
    ELSE abs(delta) END
  FROM (SELECT (figures ->> 'authorized')::bigint AS a, (figures ->> 'paid')::bigint AS p,
    (figures ->> 'refunded')::bigint AS r) f
$$;

UPDATE recon.verdicts v SET at_risk_minor = pg_temp.at_risk_minor(v.status, v.expected_minor, v.settled_minor,
  v.delta_minor, v.explanation -> 'figures', CASE WHEN v.status IN ('approval_expired', 'missing_at_provider')
    THEN (SELECT o.amount_minor FROM recon.orders o WHERE o.order_id = v.order_id) END)
WHERE v.status NOT IN ('matched', 'pending');

UPDATE recon.verdict_history h SET at_risk_minor = pg_temp.at_risk_minor(h.status, h.expected_minor, h.settled_minor,
  h.delta_minor, h.explanation -> 'figures', CASE WHEN h.status IN ('approval_expired', 'missing_at_provider')
    THEN (SELECT o.amount_minor FROM recon.orders o WHERE o.order_id = h.order_id) END)
WHERE h.status NOT IN ('matched', 'pending');

-- A run's bridge per currency and status, written when it finishes, its parts adding up to its recon.run_totals row.
CREATE TABLE recon.run_status_totals (
  run_id          bigint NOT NULL,
  currency        char(3) NOT NULL,
  status          text NOT NULL,
  verdicts        integer NOT NULL,
  orders          integer NOT NULL,
  unknown_orders  integer NOT NULL,
  expected_minor  bigint NOT NULL,
  settled_minor   bigint NOT NULL,
  delta_minor     bigint NOT NULL,
  -- Of the verdicts whose money at risk is known; at_risk_unknown counts the others.
  at_risk_minor   bigint NOT NULL,
  at_risk_unknown integer NOT NULL,
  PRIMARY KEY (run_id, currency, status)
);

-- The runs finished before: their verdicts as they gave them (the versions that held at each, within its scope).
INSERT INTO recon.run_status_totals (run_id, currency, status, verdicts, orders, unknown_orders, expected_minor,
  settled_minor, delta_minor, at_risk_minor, at_risk_unknown)
SELECT r.run_id, coalesce(v.currency, 'XXX'), v.status, count(*), count(*) FILTER (WHERE v.known_order),
  count(*) FILTER (WHERE NOT v.known_order), sum(v.expected_minor), sum(v.settled_minor), sum(v.delta_minor),
  coalesce(sum(v.at_risk_minor), 0), count(*) FILTER (WHERE v.at_risk_minor IS NULL)
FROM recon.reconciliation_runs r
JOIN (SELECT x.run_id, x.order_id, x.known_order, x.status, x.currency, x.expected_minor, x.settled_minor,
        x.delta_minor, x.at_risk_minor, NULL::bigint AS until_run_id FROM recon.verdicts x
      UNION ALL
      SELECT h.run_id, h.order_id, h.known_order, h.status, h.currency, h.expected_minor, h.settled_minor,
        h.delta_minor, h.at_risk_minor, h.until_run_id FROM recon.verdict_history h) v
  ON v.run_id <= r.run_id AND (v.until_run_id IS NULL OR v.until_run_id > r.run_id)
WHERE r.finished_at IS NOT NULL AND r.pruned_at IS NULL AND (
  r.scope ->> 'kind' = 'all'
  OR (r.scope ->> 'kind' = 'created_since' AND v.known_order AND EXISTS (SELECT 1 FROM recon.orders o
      WHERE o.order_id = v.order_id AND o.created_at >= (r.scope ->> 'since')::timestamptz))
  OR (r.kind = 'nightly' AND v.order_id IN (SELECT unnest(q.order_ids) FROM recon.export_requests q
      WHERE q.nightly_run_id = r.nightly_run_id AND q.attempt = 1))
  OR (r.kind <> 'nightly' AND r.scope ->> 'kind' = 'orders' AND v.order_id IN (SELECT s.order_id
      FROM recon.run_scope_orders s WHERE s.run_id = r.run_id)))
GROUP BY r.run_id, coalesce(v.currency, 'XXX'), v.status;

-- A run's bridge per account and currency, written when it finishes: the succeeded transactions its verdicts
-- considered, as they stood then. identifier and currency are null where a transaction has none.
CREATE TABLE recon.run_account_totals (
  run_id         bigint NOT NULL,
  identifier     text,
  currency       char(3),
  orders         integer NOT NULL,
  transactions   integer NOT NULL,
  paid_minor     bigint NOT NULL,
  refunded_minor bigint NOT NULL
);
CREATE INDEX run_account_totals_run ON recon.run_account_totals (run_id);

-- The runs finished before: their verdicts, with the transactions as they are now (what the view read).
INSERT INTO recon.run_account_totals (run_id, identifier, currency, orders, transactions, paid_minor, refunded_minor)
SELECT run_id, identifier, currency, count(*), sum(transactions), coalesce(sum(paid), 0), coalesce(sum(refunded), 0)
FROM (
  SELECT r.run_id, t.order_id, t.identifier, t.currency, count(*) AS transactions,
    sum(t.amount_minor) FILTER (WHERE lower(btrim(t.operation_type)) IN ('payment', 'capture')) AS paid,
    sum(t.amount_minor) FILTER (WHERE lower(btrim(t.operation_type)) = 'refund') AS refunded
  FROM recon.reconciliation_runs r
  JOIN (SELECT x.run_id, x.order_id, x.known_order, x.transaction_ids, NULL::bigint AS until_run_id FROM recon.verdicts x
        UNION ALL
        SELECT h.run_id, h.order_id, h.known_order, h.transaction_ids, h.until_run_id FROM recon.verdict_history h) v
    ON v.run_id <= r.run_id AND (v.until_run_id IS NULL OR v.until_run_id > r.run_id)
  CROSS JOIN LATERAL unnest(v.transaction_ids) AS considered (transaction_id)
  JOIN recon.transactions t ON t.transaction_id = considered.transaction_id AND t.exec_code = '0000'
  WHERE r.finished_at IS NOT NULL AND r.pruned_at IS NULL AND (
    r.scope ->> 'kind' = 'all'
    OR (r.scope ->> 'kind' = 'created_since' AND v.known_order AND EXISTS (SELECT 1 FROM recon.orders o
        WHERE o.order_id = v.order_id AND o.created_at >= (r.scope ->> 'since')::timestamptz))
    OR (r.kind = 'nightly' AND v.order_id IN (SELECT unnest(q.order_ids) FROM recon.export_requests q
        WHERE q.nightly_run_id = r.nightly_run_id AND q.attempt = 1))
    OR (r.kind <> 'nightly' AND r.scope ->> 'kind' = 'orders' AND v.order_id IN (SELECT s.order_id
        FROM recon.run_scope_orders s WHERE s.run_id = r.run_id)))
  GROUP BY r.run_id, t.order_id, t.identifier, t.currency
) per_order
GROUP BY run_id, identifier, currency;

-- The rule now lives with the verdict's writer (src/reconcile/verdicts-sql.ts); nothing reads the old function.
DROP FUNCTION IF EXISTS recon.at_risk_minor(text, bigint, bigint, bigint, jsonb, bigint);

-- Just-in-time compilation pays for itself on queries that run for minutes; recon's and the accountants' run for
-- milliseconds to seconds, and over a million orders compiling took longer than running (1.4 s of 1.75 s for the
-- exceptions with the most money at risk, 2.7 s of a run's totals per account). Off for this database's new
-- sessions; a role that may not alter the database keeps the server's setting (docs/database.md).
DO $$
BEGIN
  EXECUTE format('ALTER DATABASE %I SET jit = off', current_database());
EXCEPTION WHEN insufficient_privilege THEN
  RAISE NOTICE 'recon: could not turn jit off for database %: %', current_database(), SQLERRM;
END $$;
