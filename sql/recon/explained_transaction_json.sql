-- recon.explained_transaction as json text, for a reader that parses it (recon report): json is written as text where
-- jsonb builds a binary object, then writes it out again, which cost the report's pages of open exceptions two
-- fifths of their time. Its keys are in jsonb's order (shorter first, then bytewise) and changed_after_run appears only
-- when true, so that both parse to the same object, key order included (test/report/report-queries.test.ts).
CREATE FUNCTION recon.explained_transaction_json(t recon.transactions, source_file text, changed_after_run boolean)
RETURNS json
LANGUAGE sql STABLE PARALLEL SAFE AS $$
  SELECT CASE WHEN changed_after_run THEN json_build_object(
      'currency', t.currency, 'exec_code', t.exec_code, 'occurred_at', t.occurred_at, 'source_file', source_file,
      'source_line', t.line, 'amount_minor', t.amount_minor::text, 'source_entry', t.entry,
      'operation_type', t.operation_type, 'transaction_id', t.transaction_id, 'changed_after_run', true)
    ELSE json_build_object(
      'currency', t.currency, 'exec_code', t.exec_code, 'occurred_at', t.occurred_at, 'source_file', source_file,
      'source_line', t.line, 'amount_minor', t.amount_minor::text, 'source_entry', t.entry,
      'operation_type', t.operation_type, 'transaction_id', t.transaction_id) END
$$;
