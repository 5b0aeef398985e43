import type { Connection } from '../db/database.ts';
import { openExport } from '../decompress/open-export.ts';
import { ReconError } from '../errors.ts';
import { planHeader } from '../normalize/header-plan.ts';
import { createRecordNormalizer } from '../normalize/record-normalizer.ts';
import { ACCOUNT_NOT_ASKED, guardedAccounts } from '../normalize/row-scope.ts';
import { parseCsv } from '../parse/parse-csv.ts';
import type { IngestProgress } from '../terminal/progress-bar.ts';
import { copyChunkRows, type CopiedRows } from './copy-chunk-rows.ts';
import { copyItemBytes, type ChunkEnd, type CopyItem, type EntryEnd } from './copy-item.ts';
import { entryCopyItems } from './entry-copy-items.ts';
import type { ExportFile } from './export-file.ts';
import { askedAt, type FileIdentity } from './files-repository.ts';
import { EntryError } from './ingest-failure.ts';
import type { IngestOptions } from './ingest-options.ts';
import { FIRST_CHUNK_WAY, nextChunkWay, type LoadStep } from './load-plan.ts';
import { mergeChunk, type ChunkToMerge } from './merge-chunk.ts';
import { readAhead, type ReadAhead } from './read-ahead.ts';
import { readRawLines } from './raw-lines.ts';
import { recordDigestSeed } from './row-digest.ts';
import { beginStaging, mergeStaged, type MergeCounts, type StagedEntry } from './staged-file.ts';
import { createStagingRowEncoder, rowLineage } from './staging-row-encoder.ts';
import type { StoredAccountGuard } from './stored-accounts.ts';

/** COPY text parsed ahead of the database while it merges a chunk: about 90,000 rows, most of a chunk. */
export const READ_AHEAD_BYTES = 16 * 1024 * 1024;

/** What a load read of a file, and what its merges did. */
export interface LoadedRecords {
  readonly read: { readonly rows: number; readonly rejected: number };
  readonly merged: MergeCounts;
}

/**
 * The load plan's `whole-file` and `chunks` steps: normalizes, stages and merges the step's records, inside the
 * caller's transaction. Each entry's parser runs ahead of its COPY statements (read-ahead.ts); in `chunks`, each
 * chunk is merged while the next one parses.
 */
export async function loadRecords(
  connection: Connection,
  fileId: string,
  file: ExportFile,
  identity: FileIdentity,
  step: Extract<LoadStep, { step: 'whole-file' | 'chunks' }>,
  options: IngestOptions,
): Promise<LoadedRecords> {
  const { onProgress, signal } = options;
  const { records } = step;
  const chunkRows = step.step === 'chunks' ? step.chunkRows : Number.POSITIVE_INFINITY;
  const staged = await beginStaging(connection);
  const opened = await openExport(file.path, options.limits, { name: file.name, onWarning: options.onWarning });
  const progress = (phase: IngestProgress['phase'], bytesRead: number, rows: number): IngestProgress => ({
    file: identity.name,
    phase,
    fileBytes: identity.sizeBytes,
    bytesRead,
    rows,
  });
  const entries: StagedEntry[] = [];
  let read = { rows: 0, rejected: 0, recordsInOpenChunk: 0 };
  // The way of the next chunk and what the merges so far leave. The parser asks for `chunk.way` as each chunk starts,
  // running ahead; the COPYs and merges replace `chunk` with what they learn.
  let chunk: ChunkToMerge = { way: FIRST_CHUNK_WAY, merged: undefined, acceptedStaged: false };
  let label = file.name;
  try {
    for await (const source of opened.entries) {
      label = source.label;
      const parsed = await parseCsv(await source.open(), { label });
      const header = planHeader(parsed.header, label);
      const entryIndex = entries.length;
      const entry: StagedEntry = {
        name: source.name,
        columns: header.presentColumns.filter((column) => column !== 'transaction_id'),
        withExtra: header.extraHeaders.length > 0,
      };
      entries.push(entry);
      const rowsBefore = read.rows;
      const items = readAhead(
        entryCopyItems(parsed, {
          normalize: createRecordNormalizer(header, { timezone: options.timezone, scope: options.scope }),
          encoder: createStagingRowEncoder(
            entryIndex,
            entry,
            staged,
            recordDigestSeed(header.header, options.timezone),
          ),
          lineage: rowLineage(fileId, source.name),
          chunkRows,
          recordsInOpenChunk: read.recordsInOpenChunk,
          firstWay: chunk.way,
          wayOfNextChunk: () => chunk.way,
          lines:
            records.kind === 'changed-records'
              ? (records.changed.neededLines.get(entryIndex) ?? new Set<number>())
              : undefined,
          signal,
          onRecordsRead:
            onProgress && ((rows) => onProgress(progress('reading', opened.bytesRead(), rowsBefore + rows))),
        }),
        options.readAheadBytes ?? READ_AHEAD_BYTES,
        copyItemBytes,
      );
      try {
        let way = chunk.way;
        for (;;) {
          chunk = afterCopy(chunk, await copyChunkRows(connection, entry, entryIndex, way, items));
          const end = await endOfChunkRows(items);
          if (end.kind === 'entry-end') {
            read = {
              rows: read.rows + end.records,
              rejected: read.rejected + end.rejected,
              recordsInOpenChunk: end.recordsInOpenChunk,
            };
            break;
          }
          signal?.throwIfAborted();
          const { merged, outcome } = await mergeChunk(connection, fileId, entries, staged, chunk);
          chunk = { way: nextChunkWay(chunk.way, outcome), merged, acceptedStaged: false };
          way = end.nextWay;
        }
      } finally {
        await items.close();
      }
    }
  } catch (error) {
    throw error instanceof ReconError ? error : new EntryError(label, error);
  } finally {
    await opened.close();
  }
  // Every byte has been read by now, a zip's directory included, which its entries' streams do not count.
  onProgress?.(progress('merging', identity.sizeBytes, read.rows));
  try {
    // A file loaded in chunks merges its last one as the others: the last merge then takes only the rows set aside.
    const chunks = chunk.merged && (await mergeChunk(connection, fileId, entries, staged, chunk)).merged;
    return {
      read,
      merged: await mergeStaged(
        connection,
        fileId,
        entries,
        staged,
        chunks,
        storedAccountGuard(file, options),
        askedAt(identity.arrival),
      ),
    };
  } catch (error) {
    throw new EntryError(file.name, error);
  }
}

/** A request's file keeps off the stored transactions of the accounts it did not ask for (stored-accounts.ts). */
function storedAccountGuard(file: ExportFile, options: IngestOptions): StoredAccountGuard | undefined {
  const accounts = guardedAccounts(options.scope);
  return (
    accounts && {
      accounts,
      reason: ACCOUNT_NOT_ASKED,
      rawLines: (lines) => readRawLines(file, options, lines),
    }
  );
}

/** The chunk after some of its rows were COPYed. */
function afterCopy(chunk: ChunkToMerge, copied: CopiedRows): ChunkToMerge {
  switch (copied.into) {
    case 'staging':
      return { ...chunk, acceptedStaged: true };
    case 'recon.transactions': {
      // Only a chunk after a merged one goes straight into the table.
      const merged = chunk.merged!;
      return { ...chunk, merged: { ...merged, inserted: merged.inserted + copied.rows } };
    }
    case 'staging-after-stored-id':
      return { ...chunk, way: nextChunkWay(chunk.way, 'stored-id-met'), acceptedStaged: true };
  }
}

/** The item after a chunk's rows of one entry: the chunk's end or the entry's. */
async function endOfChunkRows(items: ReadAhead<CopyItem>): Promise<ChunkEnd | EntryEnd> {
  const item = await items.next();
  if (item?.kind === 'chunk-end' || item?.kind === 'entry-end') return item;
  throw new Error(`the COPY text of an entry went on past its rows: ${item ? item.kind : 'no entry-end'}`);
}
