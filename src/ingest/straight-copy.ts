import { Readable } from 'node:stream';
import { sql } from 'kysely';
import type { Connection } from '../db/database.ts';
import type { TransactionsTable } from '../db/schema.ts';
import type { TransactionColumn } from '../normalize/transaction-row.ts';
import { unlessUniqueViolation } from './savepoint.ts';
import { stagedColumns, type StagedEntry } from './staged-file.ts';
import { STAGING_TABLE, withStaging } from './staging-table.ts';

/**
 * The load plan's `straight-into-table` chunks: once a chunk of a file has proven new (merge-chunk.ts), the next ones
 * skip the staging table and the INSERT ... SELECT that moved each row a second time. COPY writes rows in batches and
 * parses them once; a chunk that meets a stored id fails in its savepoint, and its rows, kept by the caller, go to
 * the staging table instead (`stageRowsInstead`). Rejected rows never come here.
 *
 * The rows of a failed straight COPY pass through this table, which has recon.transactions' columns, on their way to
 * the staging table: they are COPY text in recon.transactions' column order.
 */
export const FAILED_STRAIGHT_TABLE = 'recon_failed_straight';

function straightColumns(entry: StagedEntry): (TransactionColumn | 'extra' | 'row_digest')[] {
  return [...stagedColumns(entry), ...(entry.withExtra ? ['extra' as const] : []), 'row_digest'];
}

/** The COPY of an entry's rows into recon.transactions, or into FAILED_STRAIGHT_TABLE on their way to staging. */
export function straightCopySql(
  entry: StagedEntry,
  into: 'recon.transactions' | typeof FAILED_STRAIGHT_TABLE = 'recon.transactions',
): string {
  return `COPY ${into} (${[...straightColumns(entry), 'file_id', 'entry', 'line'].join(', ')}) FROM STDIN`;
}

/**
 * COPYs `text` into recon.transactions in a savepoint: true when every id was new, false when one was stored already
 * (or came twice in the text), nothing of it written then.
 */
export async function copyStraight(
  connection: Connection,
  entry: StagedEntry,
  text: AsyncIterable<Buffer>,
): Promise<boolean> {
  const copied = await unlessUniqueViolation(connection, 'recon_straight', async () => {
    await connection.copyFrom(straightCopySql(entry), Readable.from(text, { objectMode: false }));
    return true;
  });
  return copied ?? false;
}

/** The rows of a straight COPY that failed, into the staging table instead, as the entry's accepted rows. */
export async function stageRowsInstead(
  connection: Connection,
  entry: StagedEntry,
  entryIndex: number,
  text: readonly Buffer[],
): Promise<void> {
  const failed = sql.table(FAILED_STRAIGHT_TABLE);
  await sql`CREATE TEMP TABLE IF NOT EXISTS ${failed} (LIKE recon.transactions INCLUDING DEFAULTS) ON COMMIT DROP`.execute(
    connection.db,
  );
  await connection.copyFrom(straightCopySql(entry, FAILED_STRAIGHT_TABLE), Readable.from(text, { objectMode: false }));
  const db = withStaging(connection.db).withTables<{ [FAILED_STRAIGHT_TABLE]: TransactionsTable }>();
  const columns = straightColumns(entry);
  await db
    .insertInto(STAGING_TABLE)
    .columns(['entry_index', 'line', ...columns])
    .expression(
      db
        .selectFrom(FAILED_STRAIGHT_TABLE)
        .select([sql<number>`${entryIndex}::integer`.as('entry_index'), 'line', ...columns]),
    )
    .execute();
  await sql`TRUNCATE ${failed}`.execute(connection.db);
}
