import { Readable } from 'node:stream';
import type { Connection } from '../db/database.ts';
import { stagedColumns, type StagedEntry } from './staged-file.ts';
import { STAGING_TABLE } from './staging-table.ts';

/**
 * A chunk of new ids COPYed straight into recon.transactions: once a file's first chunk has proven new (staged-file.ts,
 * `mergeChunk`), its next chunks skip the staging table and the INSERT ... SELECT that moved each row a second time.
 * COPY writes rows in batches and parses them once; a chunk that meets a stored id fails in its savepoint, and its
 * rows, kept by the caller, go the staged way after all (`restageDirect`). Rejected rows never come here.
 */
export const DIRECT_TABLE = 'recon_direct';

function directColumns(entry: StagedEntry): string[] {
  return [...stagedColumns(entry), ...(entry.withExtra ? ['extra'] : []), 'row_digest'];
}

/** The COPY of an entry's rows into recon.transactions, or into DIRECT_TABLE to restage them. */
export function directCopySql(entry: StagedEntry, into: 'recon.transactions' | typeof DIRECT_TABLE = 'recon.transactions'): string {
  return `COPY ${into} (${[...directColumns(entry), 'file_id', 'entry', 'line'].join(', ')}) FROM STDIN`;
}

/**
 * COPYs `text` into recon.transactions in a savepoint: true when every id was new, false when one was stored already
 * (or came twice in the text), nothing of it written then.
 */
export async function copyDirect(connection: Connection, entry: StagedEntry, text: AsyncIterable<Buffer>): Promise<boolean> {
  await connection.query('SAVEPOINT recon_direct');
  try {
    await connection.copyFrom(directCopySql(entry), Readable.from(text, { objectMode: false }));
    await connection.query('RELEASE SAVEPOINT recon_direct');
    return true;
  } catch (error) {
    if (!isUniqueViolation(error)) throw error;
    await connection.query('ROLLBACK TO SAVEPOINT recon_direct');
    return false;
  }
}

export function isUniqueViolation(error: unknown): boolean {
  return (error as { code?: unknown } | undefined)?.code === '23505';
}

/** The rows of a direct COPY that failed, back into the staging table as the entry's accepted rows. */
export async function restageDirect(connection: Connection, entry: StagedEntry, entryIndex: number, text: readonly Buffer[]): Promise<void> {
  await connection.query(`CREATE TEMP TABLE IF NOT EXISTS ${DIRECT_TABLE} (LIKE recon.transactions INCLUDING DEFAULTS) ON COMMIT DROP`);
  await connection.copyFrom(directCopySql(entry, DIRECT_TABLE), Readable.from(text, { objectMode: false }));
  const columns = directColumns(entry).join(', ');
  await connection.query(`INSERT INTO ${STAGING_TABLE} (entry_index, line, ${columns}) SELECT $1, line, ${columns} FROM ${DIRECT_TABLE}`, [entryIndex]);
  await connection.query(`TRUNCATE ${DIRECT_TABLE}`);
}
