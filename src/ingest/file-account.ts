import type { Kysely } from 'kysely';
import type { Schema } from '../db/schema.ts';

/**
 * The account of the transactions a file loaded without saying theirs (no IDENTIFIER column, or an empty value),
 * when the file is the export of one account alone (SCOPE=CLIENT): they went through that account. A group's export
 * may hold any account of the group: its transactions keep no account rather than a guess, and callers do not call
 * this for it. Runs in the file's own transaction, over the rows the file wrote (a batch's few hundred).
 */
export async function fillFileAccount(db: Kysely<Schema>, fileId: string, identifier: string): Promise<void> {
  await db
    .updateTable('recon.transactions')
    .set({ identifier })
    .where('file_id', '=', fileId)
    .where('identifier', 'is', null)
    .execute();
}
