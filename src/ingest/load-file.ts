import type { Connection } from '../db/database.ts';
import { checkFirstIds, findChangedRecords } from './changed-rows-first.ts';
import type { ExportFile } from './export-file.ts';
import type { LoadedFile } from './file-result.ts';
import { insertLoadingFile, recordLoadedFile, type FileIdentity } from './files-repository.ts';
import type { IngestOptions } from './ingest-options.ts';
import {
  planLoad,
  type ChangedRecords,
  type KnownBeforeLoading,
  type LearnedWhileLoading,
  type RecordsToLoad,
} from './load-plan.ts';
import { loadRecords, type LoadedRecords } from './load-records.ts';
import type { MergeCounts } from './staged-file.ts';

/**
 * Loads one file inside the caller's transaction, step by step as the load plan says (load-plan.ts): what the plan
 * asks to find out is found out here, and the next step chosen from it, until the records are loaded.
 */
export async function loadFile(
  connection: Connection,
  file: ExportFile,
  identity: FileIdentity,
  options: IngestOptions,
): Promise<LoadedFile> {
  const fileId = await insertLoadingFile(connection, identity);
  const known: KnownBeforeLoading = {
    sizeBytes: identity.sizeBytes,
    mergesWhileNodeParses: connection.kind === 'postgres',
    chunkRows: options.chunkRows,
    changedRowsFirstMinBytes: options.changedRowsFirstMinBytes,
  };
  const { onProgress } = options;
  const reportChecking =
    onProgress &&
    ((bytesRead: number, rows: number) =>
      onProgress({ file: identity.name, phase: 'checking', fileBytes: identity.sizeBytes, bytesRead, rows }));
  let learned: LearnedWhileLoading = {};
  for (;;) {
    const step = planLoad(known, learned);
    switch (step.step) {
      case 'check-first-ids':
        learned = { ...learned, firstIds: await checkFirstIds(connection, file, step.sampleSize, options) };
        break;
      case 'changed-rows-first':
        learned = {
          ...learned,
          changedRecords: await findChangedRecords(connection, file, step.maxChangedLines, options, reportChecking),
        };
        break;
      case 'nothing-changed':
        return recordNothingChanged(connection, fileId, identity, step.changed, options);
      case 'whole-file':
      case 'chunks': {
        const { read, merged } = await loadRecords(connection, fileId, file, identity, step, options);
        return recordLoaded(connection, fileId, identity, step.records, read, merged, options);
      }
    }
  }
}

/** A file whose every record leaves its stored row as it is: recorded with its counts, nothing staged. */
async function recordNothingChanged(
  connection: Connection,
  fileId: string,
  identity: FileIdentity,
  changed: ChangedRecords,
  options: IngestOptions,
): Promise<LoadedFile> {
  options.onProgress?.({
    file: identity.name,
    phase: 'merging',
    fileBytes: identity.sizeBytes,
    bytesRead: identity.sizeBytes,
    rows: changed.records,
  });
  const same = changed.unchangedIds;
  const loaded = await recordLoadedFile(
    connection,
    fileId,
    identity,
    { rows: changed.records, rejected: 0 },
    { distinct: same, inserted: 0, updated: 0, unchanged: same, rejected: 0 },
  );
  options.signal?.throwIfAborted();
  return loaded;
}

/** Records the counts of a file whose records were loaded. */
async function recordLoaded(
  connection: Connection,
  fileId: string,
  identity: FileIdentity,
  records: RecordsToLoad,
  read: LoadedRecords['read'],
  merged: MergeCounts,
  options: IngestOptions,
): Promise<LoadedFile> {
  if (records.kind === 'changed-records') {
    // The ids left out as unchanged were never staged: they count as the merge would have counted them.
    const same = records.changed.unchangedIds;
    merged = { ...merged, distinct: merged.distinct + same, unchanged: merged.unchanged + same };
  }
  const loaded = await recordLoadedFile(connection, fileId, identity, read, merged);
  // The merge is one statement that cannot be interrupted; a stop asked for meanwhile still rolls the file back.
  options.signal?.throwIfAborted();
  return loaded;
}
