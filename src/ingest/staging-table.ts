import { sql, type ColumnDataType, type Kysely } from 'kysely';
import type { Schema, TransactionsTable } from '../db/schema.ts';
import { TRANSACTION_COLUMNS, type TransactionColumn } from '../normalize/transaction-row.ts';

/**
 * The per-file staging table. Its rows live for one transaction (ON COMMIT DELETE ROWS; a failed file's roll back),
 * so a failed file leaves nothing behind and two loads on two connections never see each other's rows. The table
 * itself stays for the session, and the next load on the connection takes it as it is: creating and dropping it
 * for each file cost more than a nightly delivery's merge, and wrote the catalog thousands of times a night.
 * Accepted and rejected rows share it, so one COPY stream carries a whole entry in order:
 * a row with a `reject_reason` is a rejected one and only its `raw` text matters.
 */
export const STAGING_TABLE = 'recon_staging';

/** Same types as recon.transactions, so a value that would not fit fails at COPY, before the upsert. */
const TRANSACTION_COLUMN_TYPES: Readonly<Record<TransactionColumn, ColumnDataType>> = {
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

type StagedTransaction = Omit<TransactionsTable, 'extra' | 'file_id' | 'entry' | 'line' | 'updated_at'>;

/** A row of the staging table (or of SET_ASIDE_TABLE, its twin) as Kysely sees it. */
interface StagingTable extends StagedTransaction {
  entry_index: number;
  line: number;
  extra: string | null;
  reject_reason: string | null;
  raw: string | null;
}

export type StagingTables = { [STAGING_TABLE]: StagingTable; [SET_ASIDE_TABLE]: StagingTable };

/** Kysely on the load's connection, knowing the staging tables of its transaction too. */
export function withStaging(db: Kysely<Schema>): Kysely<Schema & StagingTables> {
  return db.withTables<StagingTables>();
}

/** Creates the staging table, or its twin SET_ASIDE_TABLE, unless this session has it already: empty either way. */
export async function createStagingTable(db: Kysely<Schema>, name: keyof StagingTables = STAGING_TABLE): Promise<void> {
  let table = db.schema
    .createTable(name)
    .temporary()
    .ifNotExists()
    .onCommit('delete rows')
    .addColumn('entry_index', 'integer', (column) => column.notNull())
    .addColumn('line', 'integer', (column) => column.notNull());
  for (const column of TRANSACTION_COLUMNS) table = table.addColumn(column, TRANSACTION_COLUMN_TYPES[column]);
  await table
    .addColumn('extra', 'jsonb')
    .addColumn('row_digest', 'bigint')
    .addColumn('reject_reason', 'text')
    .addColumn('raw', 'text')
    .execute();
}

/** The columns one entry's COPY stream carries, in order: see `createStagingRowEncoder`. */
export function stagingCopySql(columns: readonly TransactionColumn[], withExtra: boolean): string {
  const list = [
    'entry_index',
    'line',
    ...columns,
    ...(withExtra ? ['extra'] : []),
    'row_digest',
    'reject_reason',
    'raw',
  ];
  return `COPY ${STAGING_TABLE} (${list.join(', ')}) FROM STDIN`;
}

/**
 * A file loaded in chunks keeps here, between its chunks, the staged rows of ids that were stored already when their
 * chunk merged (merge-chunk.ts); the file's last merge takes them with its last chunk (`mergeStaged`). Same columns as the staging
 * table, same life: its rows this transaction, the table the session.
 */
export const SET_ASIDE_TABLE = 'recon_set_aside';

/** Empties the staging table between chunks (a temporary table: no other transaction sees it). */
export async function emptyStagingTable(db: Kysely<Schema>): Promise<void> {
  await sql`TRUNCATE ${sql.table(STAGING_TABLE)}`.execute(db);
}
