import { sql, type Kysely } from 'kysely';
import type { Connection } from '../db/database.ts';
import { finishedCounts, type LoadCounts } from '../db/finished-counts.ts';
import type { OrderImportsTable, Schema } from '../db/schema.ts';

/** recon.order_imports: one row per import of orders, from a csv file or the merchant's database, loaded or failed. */
export interface ImportIdentity {
  readonly source: OrderImportsTable['source'];
  /** The file's path as given, or the database as describeOrdersSource names it (never a password). */
  readonly name: string;
  /** Of the file's bytes; null for a database, or a file that could not be read. */
  readonly sha256: string | null;
}

/** Inside the import's transaction: the row exists only if the import commits, so it is 'loaded' from the start. */
export async function insertLoadingImport(connection: Connection, identity: ImportIdentity): Promise<string> {
  const row = await connection.db
    .insertInto('recon.order_imports')
    .values({ source: identity.source, name: identity.name, sha256: identity.sha256, status: 'loaded' })
    .returning('import_id')
    .executeTakeFirstOrThrow();
  return String(row.import_id);
}

export async function recordImportCounts(connection: Connection, importId: string, counts: LoadCounts): Promise<void> {
  await connection.db
    .updateTable('recon.order_imports')
    .set(finishedCounts(counts))
    .where('import_id', '=', importId)
    .execute();
}

/** After the import's transaction rolled back: the failure alone is recorded. */
export async function insertFailedImport(
  db: Kysely<Schema>,
  identity: ImportIdentity,
  failure: { readonly code: string; readonly message: string },
): Promise<string> {
  const row = await db
    .insertInto('recon.order_imports')
    .values({
      source: identity.source,
      name: identity.name,
      sha256: identity.sha256,
      status: 'failed',
      finished_at: sql<Date>`now()`,
      error_code: failure.code,
      error: failure.message,
    })
    .returning('import_id')
    .executeTakeFirstOrThrow();
  return String(row.import_id);
}
