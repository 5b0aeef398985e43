-- Exports arrive out of order: a delivery held up on its way comes after the export recon asked for again, and a
-- backfill's answer may be older than last night's export. Each file now says when recon asked the service for what
-- it holds (asked_at: a delivery's request was sent, a backfill's request was made; null for a file given to recon
-- ingest, which always applies), and a row of a file asked for before the file that last wrote a transaction leaves
-- that transaction as it is: rows_outdated counts them.
ALTER TABLE recon.files
  ADD COLUMN asked_at timestamptz,
  ADD COLUMN rows_outdated integer;

UPDATE recon.files f SET asked_at = coalesce(r.sent_at, r.requested_at)
FROM recon.deliveries d JOIN recon.export_requests r ON r.request_id = d.request_id
WHERE f.delivery_id = d.delivery_id;
