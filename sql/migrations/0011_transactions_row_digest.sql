-- A digest of the source record that last wrote each transaction row, so that a re-ingest tells an unchanged row
-- without normalizing, staging or comparing it.
--
-- Nightly exports overlap: most rows of a file are already loaded, unchanged. The loader stores with every row it
-- writes a 53-bit digest of the record it came from, its header and the zone of DATE (src/load/row-digest.ts): an
-- equal digest means the record would make the stored row again. A file mostly loaded already is first read for ids
-- and digests alone (pipelines/unchanged-records.ts), and the merge skips the column-by-column comparison of a row
-- whose digest is equal. A different digest (another header, another spelling) falls back to the full comparison:
-- a digest is only ever a shortcut, never the judge of a change; null means "compare".
ALTER TABLE recon.transactions ADD COLUMN row_digest bigint;

COMMENT ON COLUMN recon.transactions.row_digest IS
  'Digest of the source record (with its header and zone) that last wrote this row; null when unknown. Lets a re-ingest leave an unchanged row alone without comparing it column by column.';

-- A write that is not the loader's (an operator's UPDATE) leaves the digest equal to the old one: clear it, so the
-- next load compares that row column by column instead of trusting a digest of what it no longer holds. The WHEN
-- clause keeps the trigger off the loader's own updates, which always set a new digest.
CREATE FUNCTION recon.forget_stale_row_digest() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  NEW.row_digest := NULL;
  RETURN NEW;
END $$;

CREATE TRIGGER transactions_forget_stale_row_digest
  BEFORE UPDATE ON recon.transactions
  FOR EACH ROW WHEN (OLD.row_digest IS NOT NULL AND OLD.row_digest IS NOT DISTINCT FROM NEW.row_digest)
  EXECUTE FUNCTION recon.forget_stale_row_digest();
