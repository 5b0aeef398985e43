-- What lets recon say at once that something is missing, rather than hours later that nothing happened.

-- Each running worker, seen again every few seconds: a command waiting on a run can tell that none is running.
-- One row per process; it goes when the process stops, and a crashed one's row goes when another worker starts.
CREATE TABLE recon.workers (
  worker_id  uuid PRIMARY KEY,
  host       text NOT NULL,
  pid        integer NOT NULL,
  started_at timestamptz NOT NULL,
  seen_at    timestamptz NOT NULL
);

-- A probe of RECON_CALLBACK_BASE_URL: recon posts to its own public callback base on a token of this table, and
-- its receiver (any serve on this database) marks the probe received. One at each start of serve and at each
-- nightly run; kept for 30 days.
CREATE TABLE recon.callback_probes (
  probe_id          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  token             text NOT NULL UNIQUE CHECK (token ~ '^[0-9A-Za-z]{8,}$'),
  callback_base_url text NOT NULL,
  -- 'serve start' or 'nightly run'.
  reason            text NOT NULL,
  nightly_run_id    bigint,
  sent_at           timestamptz NOT NULL,
  -- Set by the receiver that got the probe.
  received_at       timestamptz,
  -- Set by the prober: null while it waits for the answer.
  reachable         boolean,
  detail            text,
  checked_at        timestamptz
);
CREATE INDEX callback_probes_sent_at_idx ON recon.callback_probes (sent_at);
-- One probe per nightly run, however many workers advance it.
CREATE UNIQUE INDEX callback_probes_nightly_run_id_key ON recon.callback_probes (nightly_run_id);
