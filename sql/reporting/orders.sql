-- The merchant's orders as recon holds them, with the import (file or database sync) and line that last wrote each.
CREATE VIEW reporting.orders AS
SELECT
  o.order_id,
  o.amount_minor,
  o.currency,
  o.status,
  o.refunded_minor,
  o.payment_method,
  o.created_at,
  o.updated_at,
  o.import_id,
  i.source AS import_source,
  i.name AS import_name,
  o.line,
  recon.minor_to_unit(o.amount_minor, o.currency) AS amount,
  recon.minor_to_unit(o.refunded_minor, o.currency) AS refunded
FROM recon.orders o
JOIN recon.order_imports i ON i.import_id = o.import_id;

COMMENT ON VIEW reporting.orders IS
  'The merchant''s orders as imported (recon import-orders) or synced (recon sync-orders), one row per order, with the import of their last change.';
COMMENT ON COLUMN reporting.orders.order_id IS 'The merchant''s order id, the service''s ORDERID.';
COMMENT ON COLUMN reporting.orders.amount_minor IS 'Order amount in minor units of currency.';
COMMENT ON COLUMN reporting.orders.currency IS 'ISO 4217 currency code of the order.';
COMMENT ON COLUMN reporting.orders.status IS 'The merchant''s order status: paid, authorized, cancelled, refunded or partially_refunded.';
COMMENT ON COLUMN reporting.orders.refunded_minor IS 'Amount refunded according to the merchant, in minor units of currency (0 when none).';
COMMENT ON COLUMN reporting.orders.payment_method IS 'instalment or wallet.';
COMMENT ON COLUMN reporting.orders.created_at IS 'When the order was created, timestamptz.';
COMMENT ON COLUMN reporting.orders.updated_at IS 'When recon last changed this order (import or sync), timestamptz.';
COMMENT ON COLUMN reporting.orders.import_id IS 'The import of the order''s last change (reporting.rejected_rows.import_id for that import''s rejected rows).';
COMMENT ON COLUMN reporting.orders.import_source IS 'What that import read: file (recon import-orders) or database (recon sync-orders).';
COMMENT ON COLUMN reporting.orders.import_name IS 'The file''s path as given, or the merchant database the sync read (host/database).';
COMMENT ON COLUMN reporting.orders.line IS 'Line of the csv the order was last loaded from (1-based, header is line 1); null for a database sync.';
COMMENT ON COLUMN reporting.orders.amount IS 'amount_minor in the currency''s unit, exact (numeric: 12.34 EUR, 1500 JPY, 1.234 KWD).';
COMMENT ON COLUMN reporting.orders.refunded IS 'refunded_minor in the currency''s unit, exact (numeric).';
