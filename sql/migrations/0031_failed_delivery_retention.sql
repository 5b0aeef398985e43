-- Retention of the bytes of failed deliveries.
--
-- A delivery that failed to ingest (its file could not be loaded, or it was quarantined) kept its bytes forever as
-- the evidence of what the service sent: anyone on the internet holding a token can post a bad file, and each one
-- stayed. The prune now deletes them RECON_FAILED_DELIVERY_RETENTION_DAYS after the delivery failed, keeping its
-- row, its failure and its sha256. failed_at says when that was.
ALTER TABLE recon.deliveries ADD COLUMN failed_at timestamptz;

-- Those that failed before: when they were quarantined, else when their failed file was recorded, else (a file that
-- could not even be read) when they arrived.
UPDATE recon.deliveries d
SET failed_at = coalesce(d.quarantined_at, (SELECT f.finished_at FROM recon.files f WHERE f.file_id = d.file_id),
  d.received_at)
WHERE d.state = 'failed';

ALTER TABLE recon.deliveries ADD CONSTRAINT deliveries_failed_at_iff_failed
  CHECK ((state = 'failed') = (failed_at IS NOT NULL));

-- What a prune looks for among failed deliveries: those whose bytes are still stored, oldest failure first.
CREATE INDEX deliveries_failed_unpruned_idx ON recon.deliveries (failed_at, delivery_id)
  WHERE state = 'failed' AND bytes_pruned_at IS NULL;
