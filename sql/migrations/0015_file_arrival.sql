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
