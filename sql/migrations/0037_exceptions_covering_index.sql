-- The open exceptions, about one verdict in eight, sit on nearly every page of recon.verdicts: a question about them
-- (how many, how much at risk, how old) read the whole table through the partial index. The index now carries what
-- reporting.exceptions reads of a verdict besides its explanation and transactions, so that those questions read the
-- index alone once the table is vacuumed.
DROP INDEX recon.verdicts_exceptions_idx;
CREATE INDEX verdicts_exceptions_idx ON recon.verdicts (order_id)
  INCLUDE (status, known_order, currency, at_risk_minor, expected_minor, settled_minor, delta_minor, run_id,
    first_seen_run_id, first_seen_at, lifecycle, rejudged_run_id)
  WHERE status NOT IN ('matched', 'pending');
