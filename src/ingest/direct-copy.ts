import { Readable } from 'node:stream';
import { sql } from 'kysely';
import type { Connection } from '../db/database.ts';
import type { TransactionsTable } from '../db/schema.ts';
import type { TransactionColumn } from '../normalize/transaction-row.ts';
import { unlessUniqueViolation } from './savepoint.ts';
import { stagedColumns, type StagedEntry } from './staged-file.ts';
import { STAGING_TABLE, withStaging } from './staging-table.ts';

/**
 * A chunk of new ids COPYed straight into recon.transactions: once a file's first chunk has proven new (staged-file.ts,
 * `mergeChunk`), its next chunks skip the staging table and the INSERT ... SELECT that moved each row a second time.
 * COPY writes rows in batches and parses them once; a chunk that meets a stored id fails in its savepoint, and its
 * rows, kept by the caller, go the staged way after all (`restageDirect`). Rejected rows never come here.
 */
export const DIRECT_TABLE = 'recon_direct';

function directColumns(entry: StagedEntry): (TransactionColumn | 'extra' | 'row_digest')[] {
  return [...stagedColumns(entry), ...(entry.withExtra ? ['extra' as const] : []), 'row_digest'];
}

/** The COPY of an entry's rows into recon.transactions, or into DIRECT_TABLE to restage them. */
export function directCopySql(
  entry: StagedEntry,
  into: 'recon.transactions' | typeof DIRECT_TABLE = 'recon.transactions',
): string {
  return `COPY ${into} (${[...directColumns(entry), 'file_id', 'entry', 'line'].join(', ')}) FROM STDIN`;
}

/**
 * COPYs `text` into recon.transactions in a savepoint: true when every id was new, false when one was stored already
 * (or came twice in the text), nothing of it written then.
 */
export async function copyDirect(
  connection: Connection,
  entry: StagedEntry,
  text: AsyncIterable<Buffer>,
): Promise<boolean> {
  const copied = await unlessUniqueViolation(connection, 'recon_direct', async () => {
    await connection.copyFrom(directCopySql(entry), Readable.from(text, { objectMode: false }));
    return true;
  });
  return copied ?? false;
}

/** The rows of a direct COPY that failed, back into the staging table as the entry's accepted rows. */
export async function restageDirect(
  connection: Connection,
  entry: StagedEntry,
  entryIndex: number,
  text: readonly Buffer[],
): Promise<void> {
  const direct = sql.table(DIRECT_TABLE);
  await sql`CREATE TEMP TABLE IF NOT EXISTS ${direct} (LIKE recon.transactions INCLUDING DEFAULTS) ON COMMIT DROP`.execute(
    connection.db,
  );
  await connection.copyFrom(directCopySql(entry, DIRECT_TABLE), Readable.from(text, { objectMode: false }));
  const db = withStaging(connection.db).withTables<{ [DIRECT_TABLE]: TransactionsTable }>();
  const columns = directColumns(entry);
  await db
    .insertInto(STAGING_TABLE)
    .columns(['entry_index', 'line', ...columns])
    .expression(
      db.selectFrom(DIRECT_TABLE).select([sql<number>`${entryIndex}::integer`.as('entry_index'), 'line', ...columns]),
    )
    .execute();
  await sql`TRUNCATE ${direct}`.execute(connection.db);
}
