import type { Database } from '../src/db/database.ts';
import { givenFile, type ExportFile } from '../src/ingest/export-file.ts';
import type { FileResult } from '../src/ingest/file-result.ts';
import { ingestFile } from '../src/ingest/ingest-file.ts';
import type { IngestOptions } from '../src/ingest/ingest-options.ts';
import { createWallTimeResolver } from '../src/normalize/wall-time-resolver.ts';

/**
 * `recon ingest`: the files in turn, each loaded in a transaction of its own (src/ingest/ingest-file.ts), each result
 * reported as it comes. A file that fails is recorded as failed and the next one still loads; a stop asked for through
 * `options.signal` rolls back the file being loaded and rejects.
 */
export async function ingestFiles(
  database: Database,
  paths: readonly string[],
  options: IngestOptions,
): Promise<FileResult[]> {
  // An unknown zone is the caller's mistake, not each file's: refuse it (ReconError CONFIG) before any file.
  createWallTimeResolver(options.timezone);
  const results: FileResult[] = [];
  for (const filePath of paths) {
    options.signal?.throwIfAborted();
    const result = await ingestFile(database, givenFile(filePath), options);
    options.onResult?.(result);
    results.push(result);
  }
  return results;
}

/** One export file as `recon ingest` loads each of its files, under a name of its own rather than its path. */
export async function ingestExportFile(
  database: Database,
  file: ExportFile,
  options: IngestOptions,
): Promise<FileResult> {
  createWallTimeResolver(options.timezone);
  return ingestFile(database, file, options);
}
