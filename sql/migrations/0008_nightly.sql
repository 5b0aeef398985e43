-- The nightly run: one row per schedule date. Its exports are recon.export_requests rows (0007), one per
-- batch of ORDERIDs and attempt; its reconciliation is a recon.reconciliation_runs row. The state lives here so
-- that any process, restarted or not, picks the run up where it stands.
CREATE TABLE recon.nightly_runs (
  nightly_run_id bigserial PRIMARY KEY,
  -- The schedule slot's date in RECON_SCHEDULE_TIMEZONE: unique, so however many schedulers fire for one slot,
  -- one run exists for it.
  run_date date NOT NULL UNIQUE,
  state text NOT NULL DEFAULT 'requesting'
    CHECK (state IN ('requesting', 'waiting', 'reconciling', 'reconciled', 'failed')),
  -- The instant ages are measured at when the run's orders are reconciled: the run's start.
  as_of timestamptz NOT NULL,
  orders integer,
  batches integer,
  reconciliation_run_id bigint,
  failure text,
  started_at timestamptz NOT NULL DEFAULT now(),
  -- The last change of state: a run `reconciling` for long lost its reconciler (advance-nightly-run.ts).
  updated_at timestamptz NOT NULL DEFAULT now(),
  -- When the advance job that is due next was scheduled for: an advance schedules another only for an earlier
  -- moment, so the jobs of one run never multiply.
  next_advance_at timestamptz,
  finished_at timestamptz
);

-- A run's batch k is asked for again on timeout: each attempt is its own request with its own token, the batch
-- and attempt tie them together (unique: two processes asking again for one late batch make one request);
-- sent_at is set when a process takes the request to send it.
ALTER TABLE recon.export_requests ADD COLUMN batch integer;
ALTER TABLE recon.export_requests ADD COLUMN sent_at timestamptz;
-- A request whose sending failed without reaching the service is sent again from this moment on.
ALTER TABLE recon.export_requests ADD COLUMN retry_at timestamptz;
CREATE UNIQUE INDEX export_requests_nightly_run_batch_attempt_key ON recon.export_requests (nightly_run_id, batch, attempt);
