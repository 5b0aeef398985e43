import type { Compression } from '../decompress/detect-compression.ts';

/**
 * What became of one file given to ingest. Counts of a loaded file:
 * rows = data records read = inserted + updated + unchanged + outdated + superseded + rejected, where superseded
 * counts the earlier rows of a transaction id that the same file carries again later (the last wins), and outdated
 * the rows of transactions a file asked for later has written already (they stay as that file wrote them).
 */
export type FileResult = LoadedFile | DuplicateFile | FailedFile;

interface FileFacts {
  /** The file's name (recon.files.name): the path given to recon ingest, or a delivery's or backfill's own name. */
  readonly file: string;
  readonly sha256: string;
  readonly sizeBytes: number;
  readonly compression: Compression;
}

export interface LoadedFile extends FileFacts {
  readonly status: 'loaded';
  readonly fileId: string;
  readonly rows: number;
  readonly inserted: number;
  readonly updated: number;
  readonly unchanged: number;
  readonly outdated: number;
  readonly superseded: number;
  readonly rejected: number;
}

/** The same bytes were loaded before (recon.files `fileId`); nothing changed. */
export interface DuplicateFile extends FileFacts {
  readonly status: 'duplicate';
  readonly fileId: string;
}

/**
 * Nothing of the file was committed. `fileId` is its `failed` row in recon.files; null when the file
 * could not even be read, so there are no bytes to record.
 */
export interface FailedFile extends Partial<FileFacts> {
  readonly file: string;
  readonly status: 'failed';
  readonly fileId: string | null;
  readonly errorCode: string;
  readonly error: string;
}
