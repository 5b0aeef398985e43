import type { ColumnType, Generated } from 'kysely';

/**
 * Row types of recon's tables as Kysely sees them. `pg` returns bigint as string; money columns are
 * typed as string on select so that nothing converts them through a float by accident.
 */
type Money = ColumnType<string, bigint | string, bigint | string>;
type Timestamp = ColumnType<Date, Date | string, Date | string>;

export interface FilesTable {
  file_id: Generated<string>;
  name: string;
  sha256: string;
  size_bytes: ColumnType<string, number | bigint | string, number | bigint | string>;
  compression: 'zip' | 'gzip' | 'bzip2' | 'none';
  received_at: Generated<Timestamp>;
  finished_at: Timestamp | null;
  status: 'loaded' | 'failed';
  rows_total: number | null;
  rows_inserted: number | null;
  rows_updated: number | null;
  rows_unchanged: number | null;
  rows_rejected: number | null;
  error_code: string | null;
  error: string | null;
}

export interface TransactionsTable {
  transaction_id: string;
  identifier: string | null;
  order_id: string | null;
  operation_type: string | null;
  occurred_at: Timestamp | null;
  amount_minor: Money | null;
  currency: string | null;
  exec_code: string | null;
  fees_minor: Money | null;
  schedule_index: number | null;
  schedule_count: number | null;
  retry_index: number | null;
  retry_count: number | null;
  client_email: string | null;
  client_address: string | null;
  card_full_name: string | null;
  card_type: string | null;
  card_country: string | null;
  three_d_secure: string | null;
  three_ds_global_status: string | null;
  rule_applied: string | null;
  extra: ColumnType<Record<string, string>, string, string>;
  file_id: string;
  entry: string | null;
  line: number;
  updated_at: Generated<Timestamp>;
}

export interface RejectedRowsTable {
  rejected_row_id: Generated<string>;
  file_id: string;
  entry: string | null;
  line: number;
  raw: string;
  reason: string;
}

export interface Schema {
  'recon.files': FilesTable;
  'recon.transactions': TransactionsTable;
  'recon.rejected_rows': RejectedRowsTable;
}
