-- Several processing accounts. A merchant may hold several accounts at the service (RECON_ACCOUNTS), each with its
-- IDENTIFIER and secret, some exported together as a group (SCOPE=CLIENTSGROUP). recon.accounts is the list as
-- recon was last started with it (never a secret): reconciliation reads which payment methods each account serves,
-- the views name each account's group. An export request records the account that signed it and its scope.

CREATE TABLE recon.accounts (
  identifier      text PRIMARY KEY CHECK (char_length(identifier) BETWEEN 1 AND 32),
  account_group   text,
  -- The methods the account serves; null: any.
  payment_methods text[] CHECK (payment_methods <@ ARRAY['instalment', 'wallet']),
  -- When the list last changed (an account added or removed, a group or methods changed): a run over all orders
  -- after that judges every order again, its warnings depending on the accounts.
  changed_at      timestamptz NOT NULL DEFAULT now()
);

-- Null for the requests made before accounts were recorded: they were the single account's.
ALTER TABLE recon.export_requests
  ADD COLUMN identifier text,
  ADD COLUMN scope text CHECK (scope IN ('CLIENT', 'CLIENTSGROUP'));
