-- Retention of delivered bytes, and a record of every prune.
--
-- A delivered export's bytes are kept in recon.delivery_chunks so that any worker can ingest it. Once the delivery is
-- ingested nobody reads them again, yet they stayed forever: `recon prune` (and recon serve once a day) deletes the
-- chunks of ingested deliveries RECON_DELIVERY_RETENTION_DAYS after their file finished loading
-- (src/retention/prune-deliveries.ts). The delivery's row, its file's row (name, sha256, size) and every lineage
-- pointer stay; bytes_pruned_at says when the bytes went, and a reader that wants them gets DELIVERY_PRUNED.

ALTER TABLE recon.deliveries ADD COLUMN bytes_pruned_at timestamptz;

-- What a prune looks for: ingested deliveries whose bytes are still stored, oldest first. Bounded by received_at, so
-- that a daily prune reads the deliveries past the retention and not the whole window still kept.
CREATE INDEX deliveries_unpruned_idx ON recon.deliveries (received_at, delivery_id)
  WHERE state = 'ingested' AND bytes_pruned_at IS NULL;

-- One row per prune that removed (or was to remove) anything: recon prune, and recon serve's daily prune. A daily
-- prune claims its day by inserting the row (unique per day), so that however many recon serve processes run, one of
-- them prunes each day; a failed one is claimed again by the next check. Dry runs leave no row.
CREATE TABLE recon.prunes (
  prune_id    bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  -- schedule: recon serve's daily prune; command: recon prune.
  started_by  text NOT NULL CHECK (started_by IN ('schedule', 'command')),
  -- The day of a daily prune, in RECON_SCHEDULE_TIMEZONE; null for recon prune.
  day         date,
  started_at  timestamptz NOT NULL DEFAULT now(),
  finished_at timestamptz,
  -- What it removed, as `recon prune --json` prints it, once finished.
  removed     jsonb,
  -- Why it stopped, in one line; null while it runs and once it finished.
  failure     text,
  CHECK ((started_by = 'schedule') = (day IS NOT NULL))
);

CREATE UNIQUE INDEX prunes_day_idx ON recon.prunes (day) WHERE started_by = 'schedule';
