-- A digest of what last wrote each transaction row, so that a re-ingest tells an unchanged row by one comparison.
--
-- Nightly exports overlap: most rows of a file are already loaded, unchanged. Comparing a staged row with its stored
-- one column by column (twenty IS DISTINCT FROM) cost about 2 s of a million-row re-ingest. The loader now stages a
-- 53-bit digest of each row's values and of which columns its file carried (src/load/row-digest.ts), and stores it
-- with every row it writes: equal digests mean the row is as that same content left it. A different digest (another
-- set of columns, or a change) falls back to the full comparison, so a digest is only ever a shortcut, never the
-- judge of a change; null means "compare".
ALTER TABLE recon.transactions ADD COLUMN row_digest bigint;

COMMENT ON COLUMN recon.transactions.row_digest IS
  'Digest of the staged values (and the set of columns) that last wrote this row; null when unknown. Lets a re-ingest skip the column-by-column comparison of an unchanged row.';

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
