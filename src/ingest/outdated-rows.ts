import { sql } from 'kysely';
import type { Connection } from '../db/database.ts';
import { STAGING_TABLE, withStaging } from './staging-table.ts';

/**
 * Exports arrive out of order: a delivery held up on its way comes after the export recon asked for again, a
 * backfill's answer may be older than the night's export. A staged row of a transaction that a file asked for later
 * wrote already is older news: it leaves the stored row as it is, and goes (counted as outdated) before the file's
 * last merge, the only step that changes stored rows. Returns how many. A file given to recon ingest, asked for at no
 * known instant (null), always applies, and a stored row from such a file yields to any.
 */
export async function dropOutdatedRows(connection: Connection, askedAt: Date | null): Promise<number> {
  if (askedAt === null) return 0;
  const { numDeletedRows } = await withStaging(connection.db)
    .deleteFrom(`${STAGING_TABLE} as s`)
    .using(['recon.transactions as t', 'recon.files as f'])
    .whereRef('t.transaction_id', '=', 's.transaction_id')
    .whereRef('f.file_id', '=', 't.file_id')
    .where('s.reject_reason', 'is', null)
    .where('f.asked_at', '>', sql<Date>`${askedAt.toISOString()}::timestamptz`)
    .executeTakeFirst();
  return Number(numDeletedRows);
}
