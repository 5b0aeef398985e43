-- The accounts recon is configured with (RECON_ACCOUNTS), without their secrets: which payment methods each
-- serves and the group it belongs to.
CREATE VIEW reporting.accounts AS
SELECT a.identifier, a.account_group, a.payment_methods, a.changed_at
FROM recon.accounts a
ORDER BY a.identifier;

COMMENT ON VIEW reporting.accounts IS
  'The merchant''s processing accounts at the service, as recon was last started with them (RECON_ACCOUNTS; never a secret).';
COMMENT ON COLUMN reporting.accounts.identifier IS 'The account''s IDENTIFIER at the service.';
COMMENT ON COLUMN reporting.accounts.account_group IS 'The group the account is exported with (one request with SCOPE=CLIENTSGROUP); null when none.';
COMMENT ON COLUMN reporting.accounts.payment_methods IS 'The payment methods the account serves (instalment, wallet); null: any. A payment on an account that does not serve its order''s method is a warning on the order''s verdict.';
COMMENT ON COLUMN reporting.accounts.changed_at IS 'When the list of accounts last changed (an account added or removed, a group or methods changed), timestamptz.';
