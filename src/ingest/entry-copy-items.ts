import type { createRecordNormalizer } from '../normalize/record-normalizer.ts';
import { formatRawRecord } from '../parse/format-raw-record.ts';
import type { ParsedCsv } from '../parse/parse-csv.ts';
import type { CopyItem } from './copy-item.ts';
import { NulCharacterError } from './copy-text.ts';
import type { ChunkWay } from './load-plan.ts';
import type { RowLineage, StagingRowEncoder } from './staging-row-encoder.ts';

export interface EntryCopyOptions {
  readonly normalize: ReturnType<typeof createRecordNormalizer>;
  readonly encoder: StagingRowEncoder;
  readonly lineage: RowLineage;
  readonly chunkRows: number;
  /** Records loaded in the file's open chunk before this entry: a chunk runs on across entries. */
  readonly recordsInOpenChunk: number;
  /** The way of the entry's first rows. */
  readonly firstWay: ChunkWay;
  /**
   * The load plan's way as a chunk starts. Asked then, not before: running ahead of the COPY, the parser reaches a
   * chunk while earlier ones are still merging, and each merge may change the way of the chunks after it.
   */
  readonly wayOfNextChunk: () => ChunkWay;
  /** Only these lines are loaded (`changed-records`); every line when undefined. */
  readonly lines: ReadonlySet<number> | undefined;
  readonly signal: AbortSignal | undefined;
  /** Told how many records of the entry have been read, after each batch. */
  readonly onRecordsRead: ((records: number) => void) | undefined;
}

/**
 * Below V8's large-object size, so that each piece of COPY text is young garbage that a scavenge frees, not a large
 * object that waits for a full collection.
 */
const COPY_TEXT_CHARS = 32 * 1024;

/**
 * The COPY items of one entry (copy-item.ts): its records normalized and encoded, in pieces of a few hundred rows, a
 * `chunk-end` after every `chunkRows`-th record loaded in the file, and an `entry-end` last. The per-row work is the
 * normalizer and the encoder, with no promise and no allocation beyond the row's own strings.
 */
export async function* entryCopyItems(parsed: ParsedCsv, options: EntryCopyOptions): AsyncGenerator<CopyItem> {
  const { normalize, encoder, lineage, chunkRows, lines: wanted, signal } = options;
  let straight = options.firstWay === 'straight-into-table';
  let text = '';
  let lines = 0;
  let rejectedText = '';
  let records = 0;
  let rejected = 0;
  let recordsInChunk = options.recordsInOpenChunk;
  for await (const batch of parsed.records) {
    signal?.throwIfAborted();
    for (let i = 0; i < batch.length; i++) {
      const record = batch[i]!;
      if (wanted && !wanted.has(record.line)) continue;
      const result = normalize(record.values);
      let reason = result.ok ? undefined : result.reason;
      if (result.ok) {
        try {
          text += straight
            ? encoder.straight(result.row, record.line, record.values, lineage)
            : encoder.accepted(result.row, record.line, record.values);
          lines++;
        } catch (error) {
          if (!(error instanceof NulCharacterError)) throw error;
          reason = error.message;
        }
      }
      if (reason !== undefined) {
        const line = encoder.rejected(record.line, formatRawRecord(record.values, parsed.delimiter), reason);
        if (straight) {
          rejectedText += line;
        } else {
          text += line;
          lines++;
        }
        rejected++;
      }
      if (++recordsInChunk >= chunkRows) {
        if (text) yield { kind: 'rows', text: Buffer.from(text), lines };
        if (rejectedText) yield { kind: 'rejected', text: rejectedText };
        text = '';
        lines = 0;
        rejectedText = '';
        recordsInChunk = 0;
        const nextWay = options.wayOfNextChunk();
        straight = nextWay === 'straight-into-table';
        yield { kind: 'chunk-end', nextWay };
      } else if (text.length >= COPY_TEXT_CHARS) {
        yield { kind: 'rows', text: Buffer.from(text), lines };
        text = '';
        lines = 0;
      }
    }
    records += batch.length;
    options.onRecordsRead?.(records);
  }
  if (text) yield { kind: 'rows', text: Buffer.from(text), lines };
  if (rejectedText) yield { kind: 'rejected', text: rejectedText };
  yield { kind: 'entry-end', records, rejected, recordsInOpenChunk: recordsInChunk };
}
