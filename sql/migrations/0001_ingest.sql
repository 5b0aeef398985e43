-- Ingest: the export files recon has read, the transactions they carried, the rows it could not take.
-- Names are part of the interface: the accountants' reporting views build on them.

CREATE TABLE recon.files (
  file_id        bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  name           text NOT NULL,
  sha256         text NOT NULL CHECK (sha256 ~ '^[0-9a-f]{64}$'),
  size_bytes     bigint NOT NULL CHECK (size_bytes >= 0),
  compression    text NOT NULL CHECK (compression IN ('zip', 'gzip', 'bzip2', 'none')),
  received_at    timestamptz NOT NULL DEFAULT now(),
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

-- A file's content is loaded at most once; failed attempts of the same bytes may be retried.
CREATE UNIQUE INDEX files_loaded_sha256_key ON recon.files (sha256) WHERE status = 'loaded';

CREATE TABLE recon.transactions (
  transaction_id         text PRIMARY KEY,
  identifier             text,
  order_id               text,
  operation_type         text,
  occurred_at            timestamptz,
  amount_minor           bigint,
  currency               char(3),
  exec_code              char(4) CHECK (exec_code ~ '^[0-9]{4}$'),
  fees_minor             bigint,
  schedule_index         smallint,
  schedule_count         smallint,
  retry_index            smallint,
  retry_count            smallint,
  client_email           text,
  client_address         text,
  card_full_name         text,
  card_type              text,
  card_country           text,
  three_d_secure         text,
  three_ds_global_status text,
  rule_applied           text,
  -- Columns of the export that recon has no column for, kept as {"HEADER": "value"}.
  extra                  jsonb NOT NULL DEFAULT '{}',
  -- Lineage: the file, the zip entry (null for gzip, bzip2 and plain files) and the csv line of the last change.
  file_id                bigint NOT NULL REFERENCES recon.files (file_id),
  entry                  text,
  line                   integer NOT NULL,
  updated_at             timestamptz NOT NULL DEFAULT now(),
  CHECK (schedule_index BETWEEN 1 AND schedule_count),
  CHECK (retry_index BETWEEN 1 AND retry_count)
);

CREATE INDEX transactions_order_id_idx ON recon.transactions (order_id);
CREATE INDEX transactions_file_id_idx ON recon.transactions (file_id);

CREATE TABLE recon.rejected_rows (
  rejected_row_id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  file_id         bigint NOT NULL REFERENCES recon.files (file_id),
  entry           text,
  line            integer NOT NULL,
  raw             text NOT NULL,
  reason          text NOT NULL
);

CREATE INDEX rejected_rows_file_id_idx ON recon.rejected_rows (file_id, line);
