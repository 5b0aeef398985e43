-- Lineage of recon.transactions (file_id -> recon.files) checked once per statement rather than once per row.
--
-- The foreign key ran a trigger, and a query, for every row a load inserted or moved to a new file: about as long
-- as the rest of inserting a million rows. What it guaranteed is kept by the schema in two halves:
--   * after any statement that writes transactions' file_id, every file_id present is a file. The distinct
--     file_ids are walked on transactions_file_id_idx (one index descent per file, not per row), so the check costs
--     the same for a row or a million;
--   * a file that transactions point to cannot be deleted, renumbered or truncated away.
-- recon never deletes files; these guards are for hands on the database.

ALTER TABLE recon.transactions DROP CONSTRAINT transactions_file_id_fkey;

CREATE FUNCTION recon.check_transactions_lineage() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  unknown bigint;
BEGIN
  WITH RECURSIVE used (file_id) AS (
    (SELECT t.file_id FROM recon.transactions t ORDER BY t.file_id LIMIT 1)
    UNION ALL
    SELECT (SELECT t.file_id FROM recon.transactions t WHERE t.file_id > used.file_id ORDER BY t.file_id LIMIT 1)
    FROM used
    WHERE used.file_id IS NOT NULL
  )
  SELECT used.file_id INTO unknown
  FROM used
  WHERE used.file_id IS NOT NULL AND NOT EXISTS (SELECT FROM recon.files f WHERE f.file_id = used.file_id)
  LIMIT 1;
  IF FOUND THEN
    RAISE EXCEPTION 'recon.transactions.file_id % is not a file of recon.files', unknown
      USING ERRCODE = 'foreign_key_violation', TABLE = 'transactions', SCHEMA = 'recon';
  END IF;
  RETURN NULL;
END $$;

CREATE TRIGGER transactions_lineage
  AFTER INSERT OR UPDATE OF file_id ON recon.transactions
  FOR EACH STATEMENT EXECUTE FUNCTION recon.check_transactions_lineage();

CREATE FUNCTION recon.keep_referenced_files() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'TRUNCATE' THEN
    IF EXISTS (SELECT FROM recon.transactions) THEN
      RAISE EXCEPTION 'recon.files cannot be truncated: recon.transactions point to its files'
        USING ERRCODE = 'foreign_key_violation', TABLE = 'files', SCHEMA = 'recon';
    END IF;
    RETURN NULL;
  END IF;
  IF (TG_OP = 'DELETE' OR NEW.file_id <> OLD.file_id)
     AND EXISTS (SELECT FROM recon.transactions t WHERE t.file_id = OLD.file_id) THEN
    RAISE EXCEPTION 'file % of recon.files is the lineage of transactions in recon.transactions', OLD.file_id
      USING ERRCODE = 'foreign_key_violation', TABLE = 'files', SCHEMA = 'recon';
  END IF;
  RETURN CASE TG_OP WHEN 'DELETE' THEN OLD ELSE NEW END;
END $$;

CREATE TRIGGER files_keep_lineage
  BEFORE DELETE OR UPDATE OF file_id ON recon.files
  FOR EACH ROW EXECUTE FUNCTION recon.keep_referenced_files();

CREATE TRIGGER files_keep_lineage_on_truncate
  BEFORE TRUNCATE ON recon.files
  FOR EACH STATEMENT EXECUTE FUNCTION recon.keep_referenced_files();
