-- Alerts sent by recon itself, without Prometheus: a webhook (RECON_ALERT_WEBHOOK) and e-mail (RECON_ALERT_EMAIL).
--
-- One row per alert, keyed by its cause and what it is about (a nightly run's date, a callback base and a day):
-- raising is an INSERT that does nothing on conflict, so however many processes find a failed run at once, one
-- alert exists for it and is sent once. Delivery claims a row by moving next_attempt_at past a lease (UPDATE of rows
-- picked FOR UPDATE SKIP LOCKED), sends it outside any transaction, then records each channel's outcome: a channel
-- delivered is never sent again, a failure is tried again with backoff until the alert is given up.
--
-- A handful of rows a day at most: rows older than 30 days are deleted by the alert check itself
-- (src/alerts/prune-alerts.ts), so the table stays small without an index beyond its keys.
CREATE TABLE recon.alerts (
  alert_id bigserial PRIMARY KEY,
  cause text NOT NULL CHECK (cause IN ('nightly_failed', 'nightly_suspect', 'nightly_late', 'callback_unreachable')),
  -- What the alert is about, unique within its cause: the nightly run's date (YYYY-MM-DD) for the nightly causes.
  key text NOT NULL,
  -- The nightly run it is about, when there is one (a late run may have none: it was never started).
  nightly_run_id bigint,
  -- One line: an e-mail's subject.
  title text NOT NULL,
  -- What a person reads: a chat message, an e-mail's body.
  text text NOT NULL,
  -- The structured fields of the webhook's body: detail, nightlyDate, state, reconciliationRunId, ...
  details jsonb NOT NULL DEFAULT '{}'::jsonb,
  raised_at timestamptz NOT NULL DEFAULT now(),
  webhook_delivered_at timestamptz,
  email_delivered_at timestamptz,
  -- Deliveries started (each sends every channel not yet delivered).
  attempts integer NOT NULL DEFAULT 0 CHECK (attempts >= 0),
  -- When the next delivery may start: a backoff after a failure, or the end of the lease of a delivery under way.
  next_attempt_at timestamptz NOT NULL DEFAULT now(),
  -- The last failure, per channel, with secrets and the webhook's path left out.
  last_error text,
  -- Set when retries ran out (attempts or age): no process sends it again.
  given_up_at timestamptz,
  UNIQUE (cause, key)
);
