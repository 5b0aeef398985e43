-- How each export file reached recon, and a name that outlives the temporary file a delivery was read from.
--
-- A delivered export is spooled out of recon.delivery_chunks to a temporary file for its ingest, and was recorded in
-- recon.files under that path (<tmp>/recon-<pid>-delivery-XXXXXX/delivery-<id>[-<filename>]), a file gone once the
-- ingest ended. recon.files now says how a file arrived: `ingest` (a path given to recon ingest), `backfill` (a
-- backfill's synchronous answer) or `delivery`, with the delivery; a delivered file is named after its nightly run,
-- batch, attempt, the service's filename and the delivery (src/nightly/delivery-file-name.ts). The accountants' views
-- carry the file's id beside each transaction and, for each file, how and when it arrived.

ALTER TABLE recon.files
  ADD COLUMN arrival text CHECK (arrival IN ('ingest', 'backfill', 'delivery')),
  -- The delivery whose ingest wrote this row. A delivery of bytes loaded before points at that earlier file
  -- (recon.deliveries.file_id) and has no row here: this column, not that one, tells which delivery a file came from.
  ADD COLUMN delivery_id bigint REFERENCES recon.deliveries (delivery_id);

-- Files recorded before this migration. A delivery's spooled file was named delivery-<id>, then `-` and its filename,
-- and held the delivery's bytes: both must agree before a row is taken for that delivery's.
UPDATE recon.files f
SET delivery_id = d.delivery_id
FROM recon.deliveries d
WHERE d.delivery_id = substring(f.name FROM '/delivery-([0-9]{1,18})(?:-[^/]*)?$')::bigint
  AND d.sha256 = f.sha256;

UPDATE recon.files
SET arrival = CASE
  WHEN delivery_id IS NOT NULL THEN 'delivery'
  WHEN name LIKE 'backfill:getTransactions %' THEN 'backfill'
  ELSE 'ingest'
END;

-- Their names as src/nightly/delivery-file-name.ts makes them today: the same parts, the filename's last path segment
-- reduced to letters, digits, _ . and -, at most 100 characters. The failures recorded for them began with the old
-- path, which each takes the new name in place of.
CREATE TEMPORARY TABLE delivered_file_names ON COMMIT DROP AS
SELECT
  f.file_id,
  d.delivery_id,
  d.request_id,
  f.name AS old_name,
  CASE
    WHEN n.run_date IS NOT NULL AND r.batch IS NOT NULL
      THEN format('nightly %s batch %s attempt %s', to_char(n.run_date, 'YYYY-MM-DD'), r.batch, r.attempt)
    ELSE format('export request %s', r.request_id)
  END
  || coalesce(': ' || nullif(left(regexp_replace(regexp_replace(d.filename, '^.*[/\\]', ''), '[^A-Za-z0-9_.-]+', '_', 'g'), 100), ''), '')
  || format(' (delivery %s)', d.delivery_id) AS new_name
FROM recon.files f
JOIN recon.deliveries d ON d.delivery_id = f.delivery_id
JOIN recon.export_requests r ON r.request_id = d.request_id
LEFT JOIN recon.nightly_runs n ON n.nightly_run_id = r.nightly_run_id;

UPDATE recon.files f
SET name = m.new_name, error = replace(f.error, m.old_name, m.new_name)
FROM delivered_file_names m
WHERE m.file_id = f.file_id;

UPDATE recon.deliveries d
SET failure = replace(d.failure, m.old_name, m.new_name)
FROM delivered_file_names m
WHERE m.delivery_id = d.delivery_id AND strpos(d.failure, m.old_name) > 0;

UPDATE recon.export_requests r
SET failure = replace(r.failure, m.old_name, m.new_name)
FROM delivered_file_names m
WHERE m.request_id = r.request_id AND strpos(r.failure, m.old_name) > 0;

-- No default: whatever writes a file says how it came.
ALTER TABLE recon.files
  ALTER COLUMN arrival SET NOT NULL,
  ADD CONSTRAINT files_delivery_check CHECK ((arrival = 'delivery') = (delivery_id IS NOT NULL));

-- The reporting views, their columns as 0005 made them, new ones at the end. ------------------------------------

CREATE OR REPLACE VIEW reporting.transactions AS
SELECT
  t.transaction_id,
  t.order_id,
  t.operation_type,
  t.occurred_at,
  t.amount_minor,
  t.currency,
  t.exec_code,
  t.exec_code IS NOT DISTINCT FROM '0000' AS succeeded,
  t.schedule_index,
  t.schedule_count,
  t.retry_index,
  t.retry_count,
  t.card_type,
  t.card_country,
  t.fees_minor,
  f.name AS source_file,
  t.entry AS source_entry,
  t.line AS source_line,
  t.file_id AS source_file_id
FROM recon.transactions t
JOIN recon.files f ON f.file_id = t.file_id;

COMMENT ON COLUMN reporting.transactions.source_file IS 'Name of the export file the transaction was last loaded from (reporting.files.name); join on source_file_id, since names may repeat.';
COMMENT ON COLUMN reporting.transactions.source_file_id IS 'The export file the transaction was last loaded from: reporting.files.file_id.';

CREATE OR REPLACE VIEW reporting.files AS
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
  r.attempt AS batch_attempt
FROM recon.files f
LEFT JOIN recon.deliveries d ON d.delivery_id = f.delivery_id
LEFT JOIN recon.export_requests r ON r.request_id = d.request_id
LEFT JOIN recon.nightly_runs n ON n.nightly_run_id = r.nightly_run_id;

COMMENT ON VIEW reporting.files IS 'Every attempt to ingest an export file, loaded or failed: files given to recon ingest, backfills'' answers and the nightly runs'' deliveries.';
COMMENT ON COLUMN reporting.files.name IS 'What the file is: the path given to recon ingest; "backfill:getTransactions <instant> <ORDERIDs>" for a backfill; "nightly <run date> batch <n> attempt <k>: <filename as sent> (delivery <id>)" for a delivery (without ": <filename>" when the service sent none; "export request <id>" for a request of no nightly run).';
COMMENT ON COLUMN reporting.files.arrival IS 'How the file reached recon: delivery (posted by the service to recon serve for a nightly run), backfill (a backfill''s synchronous answer) or ingest (a path given to recon ingest).';
COMMENT ON COLUMN reporting.files.arrived_at IS 'When the file arrived, timestamptz: when recon serve received a delivery; when the ingest started otherwise (received_at).';
COMMENT ON COLUMN reporting.files.delivery_id IS 'The delivery the file was read from; null unless arrival is delivery.';
COMMENT ON COLUMN reporting.files.nightly_run_id IS 'The nightly run that asked for a delivered file; null for other files and for a request of no nightly run.';
COMMENT ON COLUMN reporting.files.nightly_run_date IS 'That nightly run''s date (in RECON_SCHEDULE_TIMEZONE); null when nightly_run_id is.';
COMMENT ON COLUMN reporting.files.batch IS 'The nightly run''s batch of ORDERIDs the delivered file answers (1-based); null when nightly_run_id is.';
COMMENT ON COLUMN reporting.files.batch_attempt IS 'Which request for that batch the file answers: 1 for the first, 2 when the batch was asked for again; null unless arrival is delivery.';
