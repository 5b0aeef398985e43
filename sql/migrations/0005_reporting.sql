-- The accountants' reporting schema: views only, over recon's tables, for their own SQL tools (each defined in a
-- file of its own under sql/reporting/).
-- recon never writes here. The views run with their owner's rights, so a reader needs SELECT on them and
-- nothing on recon (0006 grants exactly that). Money is bigint minor units everywhere, as in recon;
-- timestamps are timestamptz (shown in the session's TimeZone, stored as instants).

-- IF NOT EXISTS: migrations are bookkept in schema recon, so a database reset with DROP SCHEMA recon CASCADE
-- loses these views and the record of this file but keeps the (then empty) schema.
CREATE SCHEMA IF NOT EXISTS reporting;

COMMENT ON SCHEMA reporting IS
  'recon''s reporting database for accountants: read-only views over the ingested transactions, the merchant''s orders and the reconciliation verdicts. Money is in minor units of currency (bigint), instants are timestamptz.';
