-- A merchant with several accounts checks each notification with the secret of its IDENTIFIER, so a notification may
-- fail for want of an account as well as for a HASH that does not match: both are kept (hash_valid false) and the
-- reason tells an operator which. Until now the only reason was the HASH.
ALTER TABLE recon.notifications ADD COLUMN invalid_reason text
  CHECK (invalid_reason IN ('hash_mismatch', 'unknown_identifier', 'missing_identifier'));

UPDATE recon.notifications SET invalid_reason = 'hash_mismatch' WHERE NOT hash_valid;

ALTER TABLE recon.notifications ADD CONSTRAINT notifications_invalid_reason_iff_invalid
  CHECK ((invalid_reason IS NULL) = hash_valid);
