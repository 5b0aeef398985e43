import type { Connection } from '../db/database.ts';
import { openExport } from '../decompress/open-export.ts';
import { ReconError } from '../errors.ts';
import { planHeader } from '../normalize/header-plan.ts';
import { createRecordNormalizer } from '../normalize/record-normalizer.ts';
import { formatRawRecord } from '../parse/format-raw-record.ts';
import { parseCsv, type ParsedCsv } from '../parse/parse-csv.ts';
import type { IngestProgress } from '../terminal/progress-bar.ts';
import { checkFirstIds, findChangedRecords } from './changed-rows-first.ts';
import { NulCharacterError } from './copy-text.ts';
import { copyDirect, restageDirect } from './direct-copy.ts';
import type { ExportFile } from './export-file.ts';
import type { LoadedFile } from './file-result.ts';
import { insertLoadingFile, recordLoadedFile, type FileIdentity } from './files-repository.ts';
import { EntryError } from './ingest-failure.ts';
import type { IngestOptions } from './ingest-options.ts';
import {
  FIRST_CHUNK_WAY,
  nextChunkWay,
  planLoad,
  type ChangedRecords,
  type ChunkWay,
  type KnownBeforeLoading,
  type LearnedWhileLoading,
  type RecordsToLoad,
} from './load-plan.ts';
import { readAhead, type ReadAhead } from './read-ahead.ts';
import { recordDigestSeed } from './row-digest.ts';
import { mergeChunk, type ChunkToMerge } from './merge-chunk.ts';
import { beginStaging, mergeStaged, stageEntry, type StagedEntry } from './staged-file.ts';
import {
  createStagingRowEncoder,
  directLineage,
  type DirectLineage,
  type StagingRowEncoder,
} from './staging-row-encoder.ts';

/** COPY text parsed ahead of the database while it merges a chunk: about 90,000 rows, most of a chunk. */
const READ_AHEAD_BYTES = 16 * 1024 * 1024;

/** Counters of one file, shared by its entries' COPY streams. */
interface FileCounters {
  rows: number;
  rejected: number;
  /** Rows staged since the last chunk ended. */
  sinceChunk: number;
}

/**
 * The stream of an entry's COPY text is cut into units, one COPY each: a unit starts with UnitStart (whether its rows
 * are encoded for recon.transactions itself, `direct`, or for the staging table), ends at CHUNK_END or with the entry,
 * and a direct unit's rejected rows (staging lines) come as one Rejected item before its end.
 */
const CHUNK_END = Symbol('chunk end');
interface UnitStart {
  readonly direct: boolean;
}
interface Rejected {
  readonly rejected: string;
}
type Marker = typeof CHUNK_END | UnitStart | Rejected;

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
        return loadRecords(connection, fileId, file, identity, step.records, Number.POSITIVE_INFINITY, options);
      case 'chunks':
        return loadRecords(connection, fileId, file, identity, step.records, step.chunkRows, options);
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
    { distinct: same, inserted: 0, updated: 0, unchanged: same },
  );
  options.signal?.throwIfAborted();
  return loaded;
}

/** Normalizes, stages and merges the `records` of the file, in chunks of `chunkRows` (a whole file when infinite). */
async function loadRecords(
  connection: Connection,
  fileId: string,
  file: ExportFile,
  identity: FileIdentity,
  records: RecordsToLoad,
  chunkRows: number,
  options: IngestOptions,
): Promise<LoadedFile> {
  const { onProgress } = options;
  const staged = await beginStaging(connection);
  const opened = await openExport(file.path, options.limits, { name: file.name, onWarning: options.onWarning });
  const counters: FileCounters = { rows: 0, rejected: 0, sinceChunk: 0 };
  const progress = (phase: IngestProgress['phase'], bytesRead: number): IngestProgress => ({
    file: identity.name,
    phase,
    fileBytes: identity.sizeBytes,
    bytesRead,
    rows: counters.rows,
  });
  const reportReading = onProgress && (() => onProgress(progress('reading', opened.bytesRead())));
  const entries: StagedEntry[] = [];
  // The load plan's way for the next chunk, and what the merges so far leave: the parser reads `chunk.way` as each
  // chunk starts, running ahead, and the merges replace `chunk` as they learn.
  let chunk: ChunkToMerge = { way: FIRST_CHUNK_WAY, merged: undefined, acceptedStaged: false };
  let label = file.name;
  try {
    for await (const source of opened.entries) {
      label = source.label;
      const parsed = await parseCsv(await source.open(), { label });
      const plan = planHeader(parsed.header, label);
      const entry: StagedEntry = {
        name: source.name,
        columns: plan.presentColumns.filter((column) => column !== 'transaction_id'),
        withExtra: plan.extraHeaders.length > 0,
      };
      const normalize = createRecordNormalizer(plan, { timezone: options.timezone });
      const encoder = createStagingRowEncoder(
        entries.length,
        entry,
        staged,
        recordDigestSeed(plan.header, options.timezone),
      );
      const wanted =
        records.kind === 'changed-records'
          ? (records.changed.neededLines.get(entries.length) ?? new Set<number>())
          : undefined;
      entries.push(entry);
      const encoding = {
        encoder,
        lineage: directLineage(fileId, source.name),
        chunkRows,
        wayOfNextChunk: () => chunk.way,
      };
      const text = readAhead(
        copyText(parsed, normalize, encoding, counters, options.signal, reportReading, wanted),
        options.readAheadBytes ?? READ_AHEAD_BYTES,
      );
      try {
        for (;;) {
          const copied = await stageChunk(connection, entry, entries.length - 1, text);
          chunk = afterCopy(chunk, copied);
          if (copied.ended === 'entry') break;
          options.signal?.throwIfAborted();
          const { merged, outcome } = await mergeChunk(connection, fileId, entries, staged, chunk);
          chunk = { way: nextChunkWay(chunk.way, outcome), merged, acceptedStaged: false };
        }
      } finally {
        await text.close();
      }
    }
  } catch (error) {
    throw error instanceof ReconError ? error : new EntryError(label, error);
  } finally {
    await opened.close();
  }
  // Every byte has been read by now, a zip's directory included, which its entries' streams do not count.
  onProgress?.(progress('merging', identity.sizeBytes));
  let merged;
  try {
    // A file loaded in chunks merges its last one as the others: the last merge then takes only the rows set aside.
    const chunks = chunk.merged && (await mergeChunk(connection, fileId, entries, staged, chunk)).merged;
    merged = await mergeStaged(connection, fileId, entries, staged, chunks);
  } catch (error) {
    throw new EntryError(file.name, error);
  }
  if (records.kind === 'changed-records') {
    // The ids left out as unchanged were never staged: they count as the merge would have counted them.
    const same = records.changed.unchangedIds;
    merged = { ...merged, distinct: merged.distinct + same, unchanged: merged.unchanged + same };
  }
  const loaded = await recordLoadedFile(connection, fileId, identity, counters, merged);
  // The merge is one statement that cannot be interrupted; a stop asked for meanwhile still rolls the file back.
  options.signal?.throwIfAborted();
  return loaded;
}

/**
 * Below V8's large-object size, so that each chunk of COPY text is young garbage that a scavenge frees,
 * not a large object that waits for a full collection (which is what let the heap grow with the file).
 */
const COPY_CHUNK_CHARS = 32 * 1024;

/** How a unit's rows went: into staging, straight into recon.transactions, or into staging after a stored id. */
type CopiedUnit =
  | { readonly rows: 'staged'; readonly ended: 'chunk' | 'entry' }
  | { readonly rows: 'inserted'; readonly inserted: number; readonly ended: 'chunk' | 'entry' }
  | { readonly rows: 'stored-id-met'; readonly ended: 'chunk' | 'entry' };

/** The chunk after one of its units was COPYed. */
function afterCopy(chunk: ChunkToMerge, copied: CopiedUnit): ChunkToMerge {
  switch (copied.rows) {
    case 'staged':
      return { ...chunk, acceptedStaged: true };
    case 'inserted':
      return { ...chunk, merged: { ...chunk.merged!, inserted: chunk.merged!.inserted + copied.inserted } };
    case 'stored-id-met':
      return { ...chunk, way: nextChunkWay(chunk.way, 'stored-id-met'), acceptedStaged: true };
  }
}

/**
 * COPYs a unit of an entry's text, into staging or straight into recon.transactions, up to the end of a chunk
 * or of the entry. A direct unit that meets a stored id is written to staging instead.
 */
async function stageChunk(
  connection: Connection,
  entry: StagedEntry,
  entryIndex: number,
  text: ReadAhead<Marker>,
): Promise<CopiedUnit> {
  const start = await text.next();
  if (start.done) return { rows: 'staged', ended: 'entry' };
  const { direct } = start.value as UnitStart;
  let ended: 'chunk' | 'entry' | undefined;
  let rejected = '';
  const kept: Buffer[] = [];
  // A failed direct COPY leaves the rest of its unit to a second stream, which must stop where the unit ended: the
  // server's error can arrive after the COPY has read the unit to its end, and the next unit may be for staging.
  async function* unit(): AsyncGenerator<Buffer> {
    while (!ended) {
      const item = await text.next();
      if (item.done) {
        ended = 'entry';
      } else if (item.value === CHUNK_END) {
        ended = 'chunk';
      } else if (Buffer.isBuffer(item.value)) {
        if (direct) kept.push(item.value);
        yield item.value;
      } else if ('rejected' in item.value) {
        rejected += item.value.rejected;
      } else {
        // The next unit's start: reading on would COPY its rows with this unit's column list.
        throw new Error('the COPY text of a unit ran into the next unit');
      }
    }
  }
  if (!direct) {
    await stageEntry(connection, entry, unit());
    return { rows: 'staged', ended: ended! };
  }
  let copied: CopiedUnit;
  if (await copyDirect(connection, entry, unit())) {
    copied = { rows: 'inserted', inserted: kept.reduce((rows, buffer) => rows + countLines(buffer), 0), ended: ended! };
  } else {
    // The rest of the unit, if the failed COPY did not read it all.
    for await (const buffer of unit()) void buffer;
    await restageDirect(connection, entry, entryIndex, kept);
    copied = { rows: 'stored-id-met', ended: ended! };
  }
  if (rejected) await stageEntry(connection, entry, [rejected]);
  return copied;
}

/** Rows of COPY text: a newline inside a value is escaped, so each newline byte ends a row. */
function countLines(buffer: Buffer): number {
  let lines = 0;
  for (let at = buffer.indexOf(10); at !== -1; at = buffer.indexOf(10, at + 1)) lines++;
  return lines;
}

/**
 * The COPY text of one entry, in chunks of a few hundred rows: the per-row work is the normalizer and
 * the encoder, with no promise and no allocation beyond the row's own strings. CHUNK_END follows every
 * `chunkRows`-th row staged in the file.
 */
async function* copyText(
  parsed: ParsedCsv,
  normalize: ReturnType<typeof createRecordNormalizer>,
  {
    encoder,
    lineage,
    chunkRows,
    wayOfNextChunk,
  }: { encoder: StagingRowEncoder; lineage: DirectLineage; chunkRows: number; wayOfNextChunk: () => ChunkWay },
  counters: FileCounters,
  signal: AbortSignal | undefined,
  reportProgress: (() => void) | undefined,
  wanted: ReadonlySet<number> | undefined,
): AsyncGenerator<string | Marker> {
  // Read as each unit starts: a chunk merged meanwhile may have proven the file's chunks new, or a direct one failed.
  let direct = wayOfNextChunk() === 'straight-into-table';
  yield { direct };
  let text = '';
  let rejected = '';
  for await (const batch of parsed.records) {
    signal?.throwIfAborted();
    for (let i = 0; i < batch.length; i++) {
      const record = batch[i]!;
      if (wanted && !wanted.has(record.line)) continue;
      const result = normalize(record.values);
      let reason = result.ok ? undefined : result.reason;
      if (result.ok) {
        try {
          text += direct
            ? encoder.direct(result.row, record.line, record.values, lineage)
            : encoder.accepted(result.row, record.line, record.values);
        } catch (error) {
          if (!(error instanceof NulCharacterError)) throw error;
          reason = error.message;
        }
      }
      if (reason !== undefined) {
        const line = encoder.rejected(record.line, formatRawRecord(record.values, parsed.delimiter), reason);
        if (direct) rejected += line;
        else text += line;
        counters.rejected++;
      }
      if (++counters.sinceChunk >= chunkRows) {
        if (text) yield text;
        if (rejected) yield { rejected };
        text = '';
        rejected = '';
        counters.sinceChunk = 0;
        yield CHUNK_END;
        direct = wayOfNextChunk() === 'straight-into-table';
        yield { direct };
      } else if (text.length >= COPY_CHUNK_CHARS) {
        yield text;
        text = '';
      }
    }
    counters.rows += batch.length;
    reportProgress?.();
  }
  if (text) yield text;
  if (rejected) yield { rejected };
}
