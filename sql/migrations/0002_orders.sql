-- The merchant's own orders, the other side of every reconciliation, and where each came from:
-- an import-orders csv file or a sync from the merchant's database.

CREATE TABLE recon.order_imports (
  import_id      bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  source         text NOT NULL CHECK (source IN ('file', 'database')),
  -- The file's path as given, or the database the sync read (host/database, never the password).
  name           text NOT NULL,
  sha256         text CHECK (sha256 ~ '^[0-9a-f]{64}$'),
  started_at     timestamptz NOT NULL DEFAULT now(),
  finished_at    timestamptz,
  status         text NOT NULL CHECK (status IN ('loaded', 'failed')),
  rows_total     integer,
  rows_inserted  integer,
  rows_updated   integer,
  rows_unchanged integer,
  rows_rejected  integer,
  error_code     text,
  error          text,
  CHECK ((status = 'failed') = (error IS NOT NULL))
);

CREATE TABLE recon.orders (
  order_id       text PRIMARY KEY CHECK (length(order_id) BETWEEN 1 AND 40),
  amount_minor   bigint NOT NULL CHECK (amount_minor >= 0),
  currency       char(3) NOT NULL,
  status         text NOT NULL CHECK (status IN ('paid', 'authorized', 'cancelled', 'refunded', 'partially_refunded')),
  refunded_minor bigint NOT NULL DEFAULT 0 CHECK (refunded_minor >= 0),
  payment_method text NOT NULL CHECK (payment_method IN ('instalment', 'wallet')),
  created_at     timestamptz NOT NULL,
  updated_at     timestamptz NOT NULL DEFAULT now(),
  -- Lineage: the import of the last change, and its csv line (null for a database sync).
  import_id      bigint NOT NULL REFERENCES recon.order_imports (import_id),
  line           integer
);

CREATE INDEX orders_created_at_idx ON recon.orders (created_at);
CREATE INDEX orders_import_id_idx ON recon.orders (import_id);

CREATE TABLE recon.rejected_order_rows (
  rejected_row_id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  import_id       bigint NOT NULL REFERENCES recon.order_imports (import_id),
  -- The csv line, or the row's position in the sync query's result.
  line            integer NOT NULL,
  raw             text NOT NULL,
  reason          text NOT NULL
);

CREATE INDEX rejected_order_rows_import_id_idx ON recon.rejected_order_rows (import_id, line);
