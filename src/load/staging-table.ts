import { TRANSACTION_COLUMNS, type TransactionColumn } from '../normalize/transaction-row.ts';

/**
 * The per-file staging table. It lives for one transaction (ON COMMIT DROP), so a failed file leaves
 * nothing behind and two loads on two connections never see each other's rows.
 * Accepted and rejected rows share it, so one COPY stream carries a whole entry in order:
 * a row with a `reject_reason` is a rejected one and only its `raw` text matters.
 */
export const STAGING_TABLE = 'recon_staging';

/** Same types as recon.transactions, so a value that would not fit fails at COPY, before the upsert. */
const TRANSACTION_COLUMN_TYPES: Readonly<Record<TransactionColumn, string>> = {
  transaction_id: 'text',
  identifier: 'text',
  order_id: 'text',
  operation_type: 'text',
  occurred_at: 'timestamptz',
  amount_minor: 'bigint',
  currency: 'char(3)',
  exec_code: 'char(4)',
  fees_minor: 'bigint',
  schedule_index: 'smallint',
  schedule_count: 'smallint',
  retry_index: 'smallint',
  retry_count: 'smallint',
  client_email: 'text',
  client_address: 'text',
  card_full_name: 'text',
  card_type: 'text',
  card_country: 'text',
  three_d_secure: 'text',
  three_ds_global_status: 'text',
  rule_applied: 'text',
};

export function createStagingTableSql(): string {
  const columns = TRANSACTION_COLUMNS.map((column) => `${column} ${TRANSACTION_COLUMN_TYPES[column]}`);
  return `CREATE TEMP TABLE ${STAGING_TABLE} (
  entry_index integer NOT NULL,
  line integer NOT NULL,
  ${columns.join(',\n  ')},
  extra jsonb,
  row_digest bigint,
  reject_reason text,
  raw text
) ON COMMIT DROP`;
}

/** The columns one entry's COPY stream carries, in order: see `createRowEncoder`. */
export function stagingCopySql(columns: readonly TransactionColumn[], withExtra: boolean): string {
  const list = ['entry_index', 'line', ...columns, ...(withExtra ? ['extra'] : []), 'row_digest', 'reject_reason', 'raw'];
  return `COPY ${STAGING_TABLE} (${list.join(', ')}) FROM STDIN`;
}

/**
 * A file loaded in chunks keeps here, between its chunks, the staged rows of ids that were stored already when their
 * chunk merged; the file's last merge takes them with its last chunk (staged-file.ts). Same columns as the staging
 * table, same life: this transaction.
 */
export const LEFTOVER_TABLE = 'recon_leftover';

export function createLeftoverTableSql(): string {
  return `CREATE TEMP TABLE ${LEFTOVER_TABLE} (LIKE ${STAGING_TABLE}) ON COMMIT DROP`;
}
