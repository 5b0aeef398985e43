-- The rows of export files that could not be loaded, each with its file, line, raw text and reason.
CREATE VIEW reporting.rejected_rows AS
SELECT
  'export'::text AS kind,
  r.rejected_row_id,
  r.file_id,
  NULL::bigint AS import_id,
  f.name AS source_name,
  r.entry,
  r.line,
  r.raw,
  r.reason
FROM recon.rejected_rows r
JOIN recon.files f ON f.file_id = r.file_id
UNION ALL
SELECT
  'orders'::text,
  r.rejected_row_id,
  NULL::bigint,
  r.import_id,
  i.name,
  NULL::text,
  r.line,
  r.raw,
  r.reason
FROM recon.rejected_order_rows r
JOIN recon.order_imports i ON i.import_id = r.import_id;

COMMENT ON VIEW reporting.rejected_rows IS
  'Every row recon could not take, kept with its reason: rows of export files (kind export) and of order imports (kind orders).';
COMMENT ON COLUMN reporting.rejected_rows.kind IS 'export (a row of an export file, recon ingest) or orders (a row of an order import or sync).';
COMMENT ON COLUMN reporting.rejected_rows.rejected_row_id IS 'Id of the rejected row, unique within its kind.';
COMMENT ON COLUMN reporting.rejected_rows.file_id IS 'The export file (reporting.files.file_id) for kind export; null for kind orders.';
COMMENT ON COLUMN reporting.rejected_rows.import_id IS 'The order import (reporting.orders.import_id) for kind orders; null for kind export.';
COMMENT ON COLUMN reporting.rejected_rows.source_name IS 'The export file''s name, or the order import''s name (file path or host/database).';
COMMENT ON COLUMN reporting.rejected_rows.entry IS 'The csv entry inside a zip export; null otherwise.';
COMMENT ON COLUMN reporting.rejected_rows.line IS 'Line of the csv (1-based, header is line 1), or the row''s position in an order sync''s result.';
COMMENT ON COLUMN reporting.rejected_rows.raw IS 'The row as read, unchanged.';
COMMENT ON COLUMN reporting.rejected_rows.reason IS 'Why it was rejected, naming the column.';
