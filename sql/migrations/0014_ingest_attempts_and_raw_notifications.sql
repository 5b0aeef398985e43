-- A delivery whose ingest kills its worker (or fails the same way again) must not be taken up forever: each ingest
-- attempt is counted and marked open before it starts and closed when it ends, so that the next attempt sees a
-- predecessor that died, and two deaths or two equal failures quarantine the delivery (state failed, with why).
ALTER TABLE recon.deliveries
  ADD COLUMN attempts integer NOT NULL DEFAULT 0 CHECK (attempts >= 0),
  ADD COLUMN attempt_open boolean NOT NULL DEFAULT false,
  -- While received: how the last attempt ended badly; once failed: why the delivery was given up.
  ADD COLUMN failure text,
  -- When its attempts were given up on: what an operator looks at (recon runs, recon_deliveries_quarantined).
  ADD COLUMN quarantined_at timestamptz;

-- PostgreSQL text and jsonb cannot hold a NUL character, which a sender may put in any field: the fields are
-- stored with NUL escaped, and the notification's bytes as received (the query string or the body) beside them.
ALTER TABLE recon.notifications ADD COLUMN raw bytea;
