import type { Database } from '../db/database.ts';
import { fileErrorDetail } from '../decompress/archive-error.ts';
import { describeError, ReconError } from '../errors.ts';
import type { ExportFile } from './export-file.ts';
import type { FileResult } from './file-result.ts';
import { findLoadedFileId, insertFailedFile, type FileIdentity } from './files-repository.ts';
import { identifyFile } from './identify-file.ts';
import { describeFailure, isConcurrentLoadOfSameBytes } from './ingest-failure.ts';
import type { IngestOptions } from './ingest-options.ts';
import { loadFile } from './load-file.ts';

/**
 * One export file, read, checked against what was loaded before, and loaded in a transaction of its own. A file that
 * fails in any way is rolled back whole and recorded as failed, and its result says so: the caller goes on.
 */
export async function ingestFile(database: Database, file: ExportFile, options: IngestOptions): Promise<FileResult> {
  let identity: FileIdentity;
  try {
    identity = { name: file.name, arrival: file.arrival, ...(await identifyFile(file.path, file.name)) };
  } catch (error) {
    // No bytes, no sha256: nothing to record in recon.files, but the run still reports the file.
    const message =
      error instanceof ReconError ? error.message : `${file.name}: cannot read the file (${fileErrorDetail(error)})`;
    return { file: file.name, status: 'failed', fileId: null, errorCode: 'FILE_UNREADABLE', error: message };
  }
  const facts = {
    file: file.name,
    sha256: identity.sha256,
    sizeBytes: identity.sizeBytes,
    compression: identity.compression,
  };

  const loadedBefore = await findLoadedFileId(database.db, identity.sha256);
  if (loadedBefore !== undefined) return { ...facts, status: 'duplicate', fileId: loadedBefore };

  try {
    return await database.transaction(async (connection) => {
      const loaded = await loadFile(connection, file, identity, options);
      await options.beforeCommit?.(connection, loaded);
      return loaded;
    });
  } catch (error) {
    if (options.signal?.aborted) throw error;
    if (isConcurrentLoadOfSameBytes(error)) {
      const fileId = await findLoadedFileId(database.db, identity.sha256);
      if (fileId !== undefined) return { ...facts, status: 'duplicate', fileId };
    }
    const failure = describeFailure(error, file.name);
    let fileId: string | null = null;
    let message = failure.message;
    try {
      fileId = await insertFailedFile(database.db, identity, failure);
    } catch (recordError) {
      message += ` (and recording the failure failed: ${describeError(recordError)})`;
    }
    return { ...facts, status: 'failed', fileId, errorCode: failure.code, error: message };
  }
}
