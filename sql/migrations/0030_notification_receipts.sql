-- The service sends a notification again until it is answered OK, and anyone may replay one it sent: each receipt
-- was a row of its own, so a table that grows with every replay, and a conflict explained once per copy. A
-- notification is now stored once, the same fields (HASH included) and the same verdict on its HASH making the same
-- notification, with how many times it was received and when last.
--
-- The key is a digest of the fields as stored (jsonb, whose text is the same for the same fields in any order),
-- computed by the insert exactly as here. hash_valid is part of the key: a copy checked otherwise (an account
-- removed or its secret changed since) never turns a trusted notification into an untrusted one, or the reverse.
ALTER TABLE recon.notifications
  ADD COLUMN params_digest bytea,
  ADD COLUMN receipts bigint NOT NULL DEFAULT 1 CHECK (receipts >= 1),
  ADD COLUMN last_received_at timestamptz;

UPDATE recon.notifications SET params_digest = sha256(convert_to(params::text, 'UTF8')), last_received_at = received_at;

-- The copies already stored fold into the first of each (its id, its raw bytes), counted, with their first and
-- last receipt.
CREATE TEMPORARY TABLE notification_copies ON COMMIT DROP AS
  SELECT min(notification_id) AS kept, count(*) AS receipts, min(received_at) AS first_received,
    max(received_at) AS last_received, params_digest, hash_valid
  FROM recon.notifications
  GROUP BY params_digest, hash_valid
  HAVING count(*) > 1;

UPDATE recon.notifications n
SET receipts = c.receipts, received_at = c.first_received, last_received_at = c.last_received
FROM notification_copies c
WHERE n.notification_id = c.kept;

DELETE FROM recon.notifications n
USING notification_copies c
WHERE n.params_digest = c.params_digest AND n.hash_valid = c.hash_valid AND n.notification_id <> c.kept;

ALTER TABLE recon.notifications
  ALTER COLUMN params_digest SET NOT NULL,
  ALTER COLUMN last_received_at SET NOT NULL,
  ALTER COLUMN last_received_at SET DEFAULT now(),
  ADD CONSTRAINT notifications_last_received_after_first CHECK (last_received_at >= received_at);

CREATE UNIQUE INDEX notifications_params_digest_key ON recon.notifications (params_digest, hash_valid);
