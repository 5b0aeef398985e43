import { sql, type Kysely } from 'kysely';
import type { Connection } from '../db/database.ts';
import { finishedCounts } from '../db/finished-counts.ts';
import type { FileArrivalKind, Schema } from '../db/schema.ts';
import type { Compression } from '../decompress/detect-compression.ts';
import type { LoadedFile } from './file-result.ts';
import type { MergeCounts } from './staged-file.ts';

/** What a file's bytes are, whatever it is called. */
export interface FileContent {
  readonly sha256: string;
  readonly sizeBytes: number;
  readonly compression: Compression;
}

/** How a file reached recon: recon.files.arrival, and for a delivery recon.files.delivery_id. */
export type FileArrival =
  /** A path given to recon ingest. */
  | { readonly kind: 'ingest' }
  /** A backfill's synchronous answer, recorded as a file. */
  | { readonly kind: 'backfill' }
  /** A delivery to recon serve's receiver, spooled out of recon.delivery_chunks for its ingest. */
  | { readonly kind: 'delivery'; readonly deliveryId: string };

/** recon.files: one row per export file recon has read, loaded or failed. */
export interface FileIdentity extends FileContent {
  readonly name: string;
  readonly arrival: FileArrival;
}

function arrivalColumns(arrival: FileArrival): { arrival: FileArrivalKind; delivery_id: string | null } {
  return { arrival: arrival.kind, delivery_id: arrival.kind === 'delivery' ? arrival.deliveryId : null };
}

export async function findLoadedFileId(db: Kysely<Schema>, sha256: string): Promise<string | undefined> {
  const row = await db
    .selectFrom('recon.files')
    .select('file_id')
    .where('sha256', '=', sha256)
    .where('status', '=', 'loaded')
    .executeTakeFirst();
  return row === undefined ? undefined : String(row.file_id);
}

/**
 * Claims the file's bytes inside the load transaction. The partial unique index on sha256 (status
 * 'loaded') makes a concurrent load of the same bytes wait here and then fail with unique_violation,
 * which the caller reports as a duplicate.
 */
export async function insertLoadingFile(connection: Connection, file: FileIdentity): Promise<string> {
  const row = await connection.db
    .insertInto('recon.files')
    .values({
      name: file.name,
      ...arrivalColumns(file.arrival),
      sha256: file.sha256,
      size_bytes: file.sizeBytes,
      compression: file.compression,
      status: 'loaded',
    })
    .returning('file_id')
    .executeTakeFirstOrThrow();
  return String(row.file_id);
}

/**
 * Records a loaded file's counts and says what became of it: the rows read and rejected (by the normalizer, or by
 * the merge), the merge's counts, and the rows superseded (earlier rows of an id the same file carries again: the
 * last wins).
 */
export async function recordLoadedFile(
  connection: Connection,
  fileId: string,
  identity: FileIdentity,
  read: { readonly rows: number; readonly rejected: number },
  merged: MergeCounts,
): Promise<LoadedFile> {
  const counts = {
    rows: read.rows,
    inserted: merged.inserted,
    updated: merged.updated,
    unchanged: merged.unchanged,
    rejected: read.rejected + merged.rejected,
  };
  await connection.db.updateTable('recon.files').set(finishedCounts(counts)).where('file_id', '=', fileId).execute();
  return {
    file: identity.name,
    sha256: identity.sha256,
    sizeBytes: identity.sizeBytes,
    compression: identity.compression,
    status: 'loaded',
    fileId,
    ...counts,
    superseded: read.rows - counts.rejected - merged.distinct,
  };
}

export async function insertFailedFile(
  db: Kysely<Schema>,
  file: FileIdentity,
  failure: { readonly code: string; readonly message: string },
): Promise<string> {
  const row = await db
    .insertInto('recon.files')
    .values({
      name: file.name,
      ...arrivalColumns(file.arrival),
      sha256: file.sha256,
      size_bytes: file.sizeBytes,
      compression: file.compression,
      status: 'failed',
      finished_at: sql<Date>`now()`,
      error_code: failure.code,
      error: failure.message,
    })
    .returning('file_id')
    .executeTakeFirstOrThrow();
  return String(row.file_id);
}
