-- One transaction as an explanation lists it: what it was, and the file, zip entry and line it came from. Amounts
-- are text (a JSON number would reach a client as a float). Stored explanations and the ones reporting.reconciliation
-- assembles share this one shape. A plain SQL expression, so PostgreSQL inlines it: no cost per call. STABLE, not
-- IMMUTABLE: a timestamptz in jsonb is written in the session's zone.
CREATE FUNCTION recon.explained_transaction(t recon.transactions, source_file text) RETURNS jsonb
LANGUAGE sql STABLE PARALLEL SAFE AS $$
  SELECT jsonb_build_object(
    'transaction_id', t.transaction_id,
    'operation_type', t.operation_type,
    'exec_code', t.exec_code,
    'amount_minor', t.amount_minor::text,
    'currency', t.currency,
    'occurred_at', t.occurred_at,
    'source_file', source_file,
    'source_entry', t.entry,
    'source_line', t.line
  )
$$;
