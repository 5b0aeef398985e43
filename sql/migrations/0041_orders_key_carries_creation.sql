-- The open exceptions' questions filter and order on the age of each exception's order, read by the order's key
-- (reporting.exceptions): 120,000 lookups for a list of every exception 7 days old, each reading the key and then
-- the order's row. The key now carries the creation instant, so that those lookups read the index alone (9 MB more
-- on a million orders; a list ordered on order age 1.56 -> 1.21 s of server CPU on the million-order history).
ALTER TABLE recon.orders
  DROP CONSTRAINT orders_pkey,
  ADD CONSTRAINT orders_pkey PRIMARY KEY (order_id) INCLUDE (created_at);
