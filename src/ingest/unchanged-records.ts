import { Readable } from 'node:stream';
import type { Connection } from '../db/database.ts';
import { openExport } from '../decompress/open-export.ts';
import { ReconError } from '../errors.ts';
import type { ExportFile } from './export-file.ts';
import {
  beginFingerprints,
  classifyFingerprints,
  countStored,
  FINGERPRINT_COPY_SQL,
  fingerprintLine,
  fingerprintsRepeatIds,
  type FingerprintVerdict,
} from './fingerprints.ts';
import { createRepeatedIdFilter } from './repeated-id-filter.ts';
import { recordDigest, recordDigestSeed } from './row-digest.ts';
import { takeMergeTurn } from './staged-file.ts';
import { exportColumnOf } from '../normalize/export-columns.ts';
import { planHeader } from '../normalize/header-plan.ts';
import { parseCsv, type ParsedCsv } from '../parse/parse-csv.ts';
import { EntryError } from './ingest-failure.ts';
import type { IngestOptions } from './ingest-options.ts';

/**
 * Before a file is loaded: which of its records would leave their stored row as it is, so that only the others are
 * normalized, staged and merged. Nightly runs ask for overlapping windows, and most of what arrives each night is
 * loaded already and unchanged: a re-ingest of a million such rows normalized, COPYed and joined them all.
 *
 * A first pass reads each record's transaction id and digest (no normalization) into a narrow temporary table, and
 * one join against recon.transactions tells which records to load. Null when the whole file is to be loaded: a
 * small file, a file whose first records are mostly new (a sample of them, one index probe each), or one with too
 * many records to load for the second pass to be worth it. Returned once this load holds its turn to merge, so
 * that no other load changes a stored row between this verdict and the merge.
 */
const SAMPLE_RECORDS = 1_000;
/** Beyond this many lines to load the whole file is loaded: the list would cost memory for little gain. */
const MAX_NEEDED_LINES = 200_000;
const COPY_CHUNK_CHARS = 32 * 1024;

export async function findUnchangedRecords(
  connection: Connection,
  file: ExportFile,
  sizeBytes: number,
  options: IngestOptions,
  reportChecking?: (bytesRead: number, records: number) => void,
): Promise<UnchangedRecords | null> {
  if (sizeBytes < (options.fingerprintMinBytes ?? FINGERPRINT_MIN_BYTES)) return null;
  if (!(await looksMostlyStored(connection, file, options))) return null;

  await beginFingerprints(connection);
  const ids = createRepeatedIdFilter();
  let records = 0;
  await forEachEntry(file, options, async (entryIndex, parsed, label, bytesRead) => {
    const plan = planHeader(parsed.header, label);
    const idPosition = plan.header.map(exportColumnOf).indexOf('TRANSACTIONID');
    const seed = recordDigestSeed(plan.header, options.timezone);
    async function* lines(): AsyncGenerator<string> {
      let text = '';
      for await (const batch of parsed.records) {
        options.signal?.throwIfAborted();
        for (const record of batch) {
          // A record too short for its id still gets a fingerprint: no stored row matches it, so it is loaded, to be
          // rejected there with its reason.
          const id = record.values[idPosition] ?? '';
          text += fingerprintLine(entryIndex, record.line, id, recordDigest(record.values, seed));
          ids.add(id);
          records++;
          if (text.length >= COPY_CHUNK_CHARS) {
            yield text;
            text = '';
          }
        }
        reportChecking?.(bytesRead(), records);
      }
      if (text) yield text;
    }
    await connection.copyFrom(FINGERPRINT_COPY_SQL, Readable.from(lines(), { objectMode: false }));
  });

  await takeMergeTurn(connection);
  const repeatedIds = await fingerprintsRepeatIds(connection, ids);
  const verdict = await classifyFingerprints(connection, {
    fingerprinted: records,
    repeatedIds,
    maxNeededLines: MAX_NEEDED_LINES,
  });
  return verdict && { ...verdict, records };
}

export interface UnchangedRecords extends FingerprintVerdict {
  /** Records the file holds, fingerprinted or not. */
  readonly records: number;
}

/** Files under this size are loaded whole: the first pass would cost more than it saves. */
const FINGERPRINT_MIN_BYTES = 512 * 1024;

/** More than half of the first records of the first entry are stored already. */
async function looksMostlyStored(connection: Connection, file: ExportFile, options: IngestOptions): Promise<boolean> {
  const sample: string[] = [];
  await forEachEntry(file, options, async (_entryIndex, parsed, label) => {
    const idPosition = planHeader(parsed.header, label).header.map(exportColumnOf).indexOf('TRANSACTIONID');
    for await (const batch of parsed.records) {
      for (const record of batch) if (sample.length < SAMPLE_RECORDS) sample.push(record.values[idPosition] ?? '');
      if (sample.length >= SAMPLE_RECORDS) break;
    }
    return 'stop';
  });
  if (sample.length === 0) return false;
  return (await countStored(connection, sample)) * 2 > sample.length;
}

/** Each csv entry of the file, parsed, in archive order; errors name the entry as the load's own do. */
async function forEachEntry(
  file: ExportFile,
  options: IngestOptions,
  visit: (entryIndex: number, parsed: ParsedCsv, label: string, bytesRead: () => number) => Promise<void | 'stop'>,
): Promise<void> {
  const opened = await openExport(file.path, options.limits, { name: file.name });
  let label = file.name;
  let entryIndex = 0;
  try {
    for await (const source of opened.entries) {
      label = source.label;
      const parsed = await parseCsv(await source.open(), { label });
      if ((await visit(entryIndex++, parsed, label, () => opened.bytesRead())) === 'stop') break;
    }
  } catch (error) {
    throw error instanceof ReconError ? error : new EntryError(label, error);
  } finally {
    await opened.close();
  }
}
