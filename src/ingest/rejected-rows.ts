import { sql } from 'kysely';
import type { Connection } from '../db/database.ts';
import { STAGING_TABLE, withStaging } from './staging-table.ts';

/** Moves the staged rejected rows of a file into recon.rejected_rows, each with its entry's name (by entry_index). */
export async function moveRejectedRows(
  connection: Connection,
  fileId: string,
  entryNames: readonly (string | null)[],
): Promise<void> {
  const db = withStaging(connection.db);
  await db
    .insertInto('recon.rejected_rows')
    .columns(['file_id', 'entry', 'line', 'raw', 'reason'])
    .expression(
      db
        .selectFrom(STAGING_TABLE)
        .select([
          sql<string>`${fileId}::bigint`.as('file_id'),
          sql<string | null>`(${[...entryNames]}::text[])[entry_index + 1]`.as('entry'),
          'line',
          sql<string>`raw`.as('raw'),
          sql<string>`reject_reason`.as('reason'),
        ])
        .where('reject_reason', 'is not', null)
        .orderBy('entry_index')
        .orderBy('line'),
    )
    .execute();
}
