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
