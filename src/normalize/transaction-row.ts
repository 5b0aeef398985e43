/**
 * A transaction as recon stores it: the columns of recon.transactions (sql/migrations/0001_ingest.sql) that an
 * export row fills. Names are those of the table so the load stage maps them one to one.
 */
export const TRANSACTION_COLUMNS = [
  'transaction_id',
  'identifier',
  'order_id',
  'operation_type',
  'occurred_at',
  'amount_minor',
  'currency',
  'exec_code',
  'fees_minor',
  'schedule_index',
  'schedule_count',
  'retry_index',
  'retry_count',
  'client_email',
  'client_address',
  'card_full_name',
  'card_type',
  'card_country',
  'three_d_secure',
  'three_ds_global_status',
  'rule_applied',
] as const;

export type TransactionColumn = (typeof TRANSACTION_COLUMNS)[number];

/** null = the value was empty or its column absent from the file. */
export interface TransactionRow {
  transaction_id: string;
  identifier: string | null;
  order_id: string | null;
  operation_type: string | null;
  /** ISO 8601 instant in UTC, e.g. '2017-03-01T09:28:30Z'. */
  occurred_at: string | null;
  amount_minor: bigint | null;
  currency: string | null;
  exec_code: string | null;
  fees_minor: bigint | null;
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
  /** Columns recon has no column for: { 'HEADER AS IN FILE': value }, null when the file has none. */
  extra: Record<string, string> | null;
}
