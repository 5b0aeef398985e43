-- Reconciliation at the speed of the data.
--
-- A large run now writes its verdicts over several connections at once, each committing its own slice of the
-- ORDERID space, and finishes the run (finished_at) in one last transaction: until then its verdicts must not
-- count. The views that pick the latest verdict of each order pick it among finished runs only. (A run that
-- failed or was cut short is removed with its verdicts, by itself or by the next run.)
--
-- The lifecycle of a run compares each order with its latest earlier verdict, but only an exception matters there:
-- the exceptions' index, keyed by order, finds the orders whose latest exception may still be open without a
-- lookup for each of a million orders.

-- A CHECK of IN (...) compares in order: 'matched', nine verdicts in ten, came twelfth.
ALTER TABLE recon.verdicts DROP CONSTRAINT verdicts_status_check, ADD CONSTRAINT verdicts_status_check CHECK (status IN (
  'matched', 'pending', 'missing_at_provider', 'capture_expired', 'amount_mismatch', 'capture_at_risk',
  'approval_expired', 'status_mismatch', 'duplicate_payment', 'unknown_order', 'currency_mismatch', 'over_refunded',
  'notification_conflict'));

CREATE INDEX verdicts_order_exceptions_idx ON recon.verdicts (order_id, run_id DESC) WHERE status NOT IN ('matched', 'pending');
