-- Reconciliation: runs, the verdict of every order in a run's scope, and which verdict is each order's latest.

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

CREATE TABLE recon.verdicts (
  run_id             bigint NOT NULL REFERENCES recon.reconciliation_runs (run_id),
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
  explanation        jsonb NOT NULL,
  PRIMARY KEY (run_id, order_id)
);

CREATE INDEX verdicts_order_id_idx ON recon.verdicts (order_id, run_id);

-- Each order's latest verdict, kept by every run, so that "the current state" is a key lookup, not a scan
-- of the whole history.
CREATE TABLE recon.latest_verdicts (
  order_id text PRIMARY KEY,
  run_id   bigint NOT NULL REFERENCES recon.reconciliation_runs (run_id)
);

CREATE INDEX latest_verdicts_run_id_idx ON recon.latest_verdicts (run_id);

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
