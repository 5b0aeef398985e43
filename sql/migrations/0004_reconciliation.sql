-- Reconciliation: runs, the verdict of every order in a run's scope, and each run's bridge.

CREATE TABLE recon.reconciliation_runs (
  run_id          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  -- The instant every age is measured at (--as-of): a run can be replayed.
  as_of           timestamptz NOT NULL,
  -- {"kind": "all"} | {"kind": "orders", "order_ids": [...]} | {"kind": "created_since", "since": "..."}
  scope           jsonb NOT NULL,
  -- The settings the verdicts were computed with.
  tolerance_minor bigint NOT NULL CHECK (tolerance_minor >= 0),
  grace_hours     integer NOT NULL CHECK (grace_hours >= 0),
  started_at      timestamptz NOT NULL DEFAULT clock_timestamp(),
  finished_at     timestamptz,
  -- Orders and unknown ORDERIDs given a verdict: the sum of counts.
  orders_in_scope integer,
  -- {"matched": n, "pending": n, ...}: one key per status that occurred.
  counts          jsonb,
  -- Scope ids (--order-id) that are neither an order nor an ORDERID with transactions.
  not_found       text[] NOT NULL DEFAULT '{}',
  -- Orders expect money but no transaction at all was found for the scope: an empty source, not a clean run.
  suspect         boolean NOT NULL DEFAULT false,
  suspect_reason  text
);

-- No foreign key to the run: a run writes a million verdicts in the transaction that created the run, and
-- checking each one against it cost a tenth of the run.
CREATE TABLE recon.verdicts (
  run_id             bigint NOT NULL,
  order_id           text NOT NULL,
  -- false for an ORDERID that has succeeded transactions but no order (status unknown_order).
  known_order        boolean NOT NULL,
  status             text NOT NULL CHECK (status IN (
                       'currency_mismatch', 'notification_conflict', 'duplicate_payment', 'over_refunded',
                       'status_mismatch', 'amount_mismatch', 'approval_expired', 'capture_expired',
                       'capture_at_risk', 'pending', 'missing_at_provider', 'matched', 'unknown_order')),
  -- new | persisting for an exception; resolved the first run an earlier exception no longer is one; else null.
  lifecycle          text CHECK (lifecycle IN ('new', 'persisting', 'resolved')),
  -- The run (and its as_of) in which this exception first appeared; null when not an exception.
  first_seen_run_id  bigint,
  first_seen_at      timestamptz,
  expected_minor     bigint NOT NULL,
  settled_minor      bigint NOT NULL,
  delta_minor        bigint NOT NULL,
  currency           char(3),
  -- Every transaction of the order the run considered (ids, in no particular order).
  transaction_ids    text[] NOT NULL,
  -- What does not change the status but deserves a look (an abandoned 0002, instalment positions missing...).
  warnings           text[],
  -- The full explanation as judged (rule, reason, the transactions with their values and source lines, figures,
  -- warnings, conflicts) for every verdict but matched. A matched verdict, most of a run, keeps only its
  -- transaction ids and warnings: reporting.reconciliation assembles its explanation when read. Writing a
  -- snapshot of every transaction for a million matched orders tripled the cost of a run for nobody to read.
  explanation        jsonb,
  CHECK ((status = 'matched') = (explanation IS NULL))
);

-- An order's verdicts newest first: its latest verdict, and the previous one a run's lifecycle compares with.
CREATE UNIQUE INDEX verdicts_order_id_run_id_key ON recon.verdicts (order_id, run_id DESC);
-- Runs append their verdicts in run order, so a BRIN index finds a run's rows at almost no cost per insert.
CREATE INDEX verdicts_run_id_brin ON recon.verdicts USING brin (run_id);
-- A run's exceptions in order id order, for the reports; a tenth of the rows, so a small index to keep.
CREATE INDEX verdicts_exceptions_idx ON recon.verdicts (run_id, order_id) WHERE status NOT IN ('matched', 'pending');

-- The bridge of a run per currency: money is never summed across currencies.
CREATE TABLE recon.run_totals (
  run_id         bigint NOT NULL REFERENCES recon.reconciliation_runs (run_id),
  currency       char(3) NOT NULL,
  orders         integer NOT NULL,
  unknown_orders integer NOT NULL,
  expected_minor bigint NOT NULL,
  settled_minor  bigint NOT NULL,
  PRIMARY KEY (run_id, currency)
);

-- Minor units as people read them, for the sentences of explanations: 12390 EUR -> '123.90 EUR', 1500 JPY ->
-- '1500 JPY', by the currency's ISO 4217 exponent (2 unless listed; kept in step with src/protocol/iso-4217.ts by a
-- test). Exact numeric arithmetic, never a float. PL/pgSQL rather than SQL: a SQL function with this body is not
-- inlined, and each call then cost 17 us against 2.6 us here.
CREATE FUNCTION recon.format_money(amount bigint, currency text) RETURNS text
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
  unit bigint := (10 ^ exponent)::bigint;
  magnitude numeric := abs(amount::numeric);
  suffix text := coalesce(' ' || nullif(btrim(currency), ''), '');
BEGIN
  IF amount IS NULL THEN
    RETURN NULL;
  END IF;
  IF exponent = 0 THEN
    RETURN amount::text || suffix;
  END IF;
  RETURN CASE WHEN amount < 0 THEN '-' ELSE '' END || div(magnitude, unit)::text || '.'
    || lpad(mod(magnitude, unit)::text, exponent, '0') || suffix;
END
$$;

-- One transaction as an explanation lists it: what it was, and the file, zip entry and line it came from. Amounts
-- are text (a JSON number would reach a client as a float). Stored explanations and the ones reporting.reconciliation
-- assembles share this one shape. A plain SQL expression, so PostgreSQL inlines it: no cost per call. STABLE, not
-- IMMUTABLE: a timestamptz in jsonb is written in the session's zone.
CREATE FUNCTION recon.explained_transaction(t recon.transactions, source_file text) RETURNS jsonb
LANGUAGE sql STABLE PARALLEL SAFE AS $$
  SELECT jsonb_build_object(
    'transaction_id', t.transaction_id,
    'operation_type', t.operation_type,
    'exec_code', t.exec_code,
    'amount_minor', t.amount_minor::text,
    'currency', t.currency,
    'occurred_at', t.occurred_at,
    'source_file', source_file,
    'source_entry', t.entry,
    'source_line', t.line
  )
$$;
