-- A file loaded in chunks may rewrite a row it wrote itself a few chunks before, with the same record
-- again further down the file: the same digest, a later line. The trigger of migration 0011 took any update that
-- kept the digest for an operator's edit and cleared it. A loader's write always sets the row's lineage to the line
-- it comes from, an edit by hand leaves the lineage alone: the digest is now cleared only when both stay as they were.
DROP TRIGGER transactions_forget_stale_row_digest ON recon.transactions;

CREATE TRIGGER transactions_forget_stale_row_digest
  BEFORE UPDATE ON recon.transactions
  FOR EACH ROW WHEN (OLD.row_digest IS NOT NULL AND OLD.row_digest IS NOT DISTINCT FROM NEW.row_digest
    AND OLD.file_id IS NOT DISTINCT FROM NEW.file_id AND OLD.entry IS NOT DISTINCT FROM NEW.entry
    AND OLD.line IS NOT DISTINCT FROM NEW.line)
  EXECUTE FUNCTION recon.forget_stale_row_digest();
