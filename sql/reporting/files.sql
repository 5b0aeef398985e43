-- Every ingest attempt of an export file, with its counts, how it arrived, and whether retention pruned its delivered
-- bytes.
CREATE VIEW reporting.files AS
SELECT
  f.file_id,
  f.name,
  f.sha256,
  f.size_bytes,
  f.compression,
  f.received_at,
  f.finished_at,
  f.status,
  f.rows_total,
  f.rows_inserted,
  f.rows_updated,
  f.rows_unchanged,
  f.rows_rejected,
  f.error_code,
  f.error,
  f.arrival,
  coalesce(d.received_at, f.received_at) AS arrived_at,
  f.delivery_id,
  r.nightly_run_id,
  n.run_date AS nightly_run_date,
  r.batch,
  r.attempt AS batch_attempt,
  CASE WHEN d.delivery_id IS NOT NULL THEN d.bytes_pruned_at IS NOT NULL END AS bytes_pruned,
  d.bytes_pruned_at,
  f.asked_at,
  f.rows_outdated
FROM recon.files f
LEFT JOIN recon.deliveries d ON d.delivery_id = f.delivery_id
LEFT JOIN recon.export_requests r ON r.request_id = d.request_id
LEFT JOIN recon.nightly_runs n ON n.nightly_run_id = r.nightly_run_id;
COMMENT ON COLUMN reporting.files.file_id IS 'The attempt''s id.';
COMMENT ON COLUMN reporting.files.sha256 IS 'SHA-256 of the file''s bytes as delivered (hex): the same bytes are loaded at most once.';
COMMENT ON COLUMN reporting.files.size_bytes IS 'Size of the file as delivered (compressed), in bytes.';
COMMENT ON COLUMN reporting.files.compression IS 'Compression detected from the bytes: zip, gzip, bzip2 or none.';
COMMENT ON COLUMN reporting.files.received_at IS 'When the ingest of the file started, timestamptz.';
COMMENT ON COLUMN reporting.files.finished_at IS 'When it ended, timestamptz.';
COMMENT ON COLUMN reporting.files.status IS 'loaded (its rows are in, bad rows in reporting.rejected_rows) or failed (nothing of it was kept).';
COMMENT ON COLUMN reporting.files.rows_total IS 'Number of data rows read.';
COMMENT ON COLUMN reporting.files.rows_inserted IS 'Number of transactions the file added.';
COMMENT ON COLUMN reporting.files.rows_updated IS 'Number of known transactions whose values the file changed.';
COMMENT ON COLUMN reporting.files.rows_unchanged IS 'Number of known transactions the file repeated unchanged.';
COMMENT ON COLUMN reporting.files.rows_rejected IS 'Number of rows rejected (see reporting.rejected_rows).';
COMMENT ON COLUMN reporting.files.error_code IS 'Stable code of the failure (e.g. ARCHIVE_CORRUPT, CSV_HEADER); null when loaded.';
COMMENT ON COLUMN reporting.files.error IS 'Why the file failed, in one line; null when loaded.';

COMMENT ON VIEW reporting.files IS 'Every attempt to ingest an export file, loaded or failed: files given to recon ingest, backfills'' answers and the nightly runs'' deliveries.';
COMMENT ON COLUMN reporting.files.name IS 'What the file is: the path given to recon ingest; "backfill:getTransactions <instant> <ORDERIDs>" for a backfill; "nightly <run date> batch <n> attempt <k>: <filename as sent> (delivery <id>)" for a delivery (without ": <filename>" when the service sent none; "export request <id>" for a request of no nightly run).';
COMMENT ON COLUMN reporting.files.arrival IS 'How the file reached recon: delivery (posted by the service to recon serve for a nightly run), backfill (a backfill''s synchronous answer) or ingest (a path given to recon ingest).';
COMMENT ON COLUMN reporting.files.arrived_at IS 'When the file arrived, timestamptz: when recon serve received a delivery; when the ingest started otherwise (received_at).';
COMMENT ON COLUMN reporting.files.delivery_id IS 'The delivery the file was read from; null unless arrival is delivery.';
COMMENT ON COLUMN reporting.files.nightly_run_id IS 'The nightly run that asked for a delivered file; null for other files and for a request of no nightly run.';
COMMENT ON COLUMN reporting.files.nightly_run_date IS 'That nightly run''s date (in RECON_SCHEDULE_TIMEZONE); null when nightly_run_id is.';
COMMENT ON COLUMN reporting.files.batch IS 'The nightly run''s batch of ORDERIDs the delivered file answers (1-based); null when nightly_run_id is.';
COMMENT ON COLUMN reporting.files.batch_attempt IS 'Which request for that batch the file answers: 1 for the first, 2 when the batch was asked for again; null unless arrival is delivery.';
COMMENT ON COLUMN reporting.files.bytes_pruned IS 'Whether recon deleted the delivered file''s bytes (RECON_DELIVERY_RETENTION_DAYS after it was ingested): its row, name, sha256, size and transactions stay. False while they are kept; null unless arrival is delivery (recon never keeps the bytes of other files).';
COMMENT ON COLUMN reporting.files.bytes_pruned_at IS 'When the delivered file''s bytes were deleted, timestamptz; null while they are kept, and unless arrival is delivery.';
COMMENT ON COLUMN reporting.files.asked_at IS 'When recon asked the service for what the file holds (a delivery''s request sent, a backfill''s request made), timestamptz; null for a file given to recon ingest. A row of a file asked for earlier never replaces one a file asked for later wrote.';
COMMENT ON COLUMN reporting.files.rows_outdated IS 'Rows of transactions that a file asked for later had written already: left as that file wrote them (exports can arrive out of order).';
