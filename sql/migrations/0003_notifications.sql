-- Every notification the payment service sent, kept raw. A notification with a bad HASH is kept too
-- (hash_valid false) so that nothing received is lost, but only valid ones count in a reconciliation.

CREATE TABLE recon.notifications (
  notification_id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  received_at     timestamptz NOT NULL DEFAULT now(),
  transaction_id  text,
  order_id        text,
  operation_type  text,
  -- Zero-padded to 4 digits like recon.transactions.exec_code; null when absent or not 1-4 digits.
  exec_code       char(4) CHECK (exec_code ~ '^[0-9]{4}$'),
  -- AMOUNT of a notification is an integer of minor units already; null when absent or not an integer.
  amount_minor    bigint,
  currency        char(3),
  hash_valid      boolean NOT NULL,
  -- Every field as received, unknown ones included.
  params          jsonb NOT NULL
);

CREATE INDEX notifications_transaction_id_idx ON recon.notifications (transaction_id);
