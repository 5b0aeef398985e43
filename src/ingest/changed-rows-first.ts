import { Readable } from 'node:stream';
import type { Connection } from '../db/database.ts';
import { openExport } from '../decompress/open-export.ts';
import { ReconError } from '../errors.ts';
import { exportColumnOf } from '../normalize/export-columns.ts';
import { planHeader } from '../normalize/header-plan.ts';
import { parseCsv, type ParsedCsv } from '../parse/parse-csv.ts';
import type { ExportFile } from './export-file.ts';
import {
  beginFingerprints,
  classifyFingerprints,
  countStored,
  FINGERPRINT_COPY_SQL,
  fingerprintLine,
  fingerprintsRepeatIds,
} from './fingerprints.ts';
import { EntryError } from './ingest-failure.ts';
import type { IngestOptions } from './ingest-options.ts';
import type { ChangedRecords } from './load-plan.ts';
import { createRepeatedIdFilter } from './repeated-id-filter.ts';
import { recordDigest, recordDigestSeed } from './row-digest.ts';
import { takeMergeTurn } from './staged-file.ts';

/**
 * The load plan's `check-first-ids` and `changed-rows-first` steps (load-plan.ts). Nightly runs ask for overlapping
 * windows, and most of what arrives each night is loaded already and unchanged: normalizing, staging and joining all
 * of it again is most of a re-ingest's time. A first pass reads each record's transaction id and digest (no
 * normalization) into a narrow temporary table, and one join against recon.transactions tells which records to load.
 */
const COPY_CHUNK_CHARS = 32 * 1024;

/** How many of the first `sampleSize` ids of the file's first entry are stored already. */
export async function checkFirstIds(
  connection: Connection,
  file: ExportFile,
  sampleSize: number,
  options: IngestOptions,
): Promise<{ sampled: number; stored: number }> {
  const sample: string[] = [];
  await forEachEntry(file, options, async (_entryIndex, parsed, label) => {
    const idPosition = planHeader(parsed.header, label).header.map(exportColumnOf).indexOf('TRANSACTIONID');
    for await (const batch of parsed.records) {
      for (const record of batch) if (sample.length < sampleSize) sample.push(record.values[idPosition] ?? '');
      if (sample.length >= sampleSize) break;
    }
    return 'stop';
  });
  return { sampled: sample.length, stored: sample.length === 0 ? 0 : await countStored(connection, sample) };
}

/**
 * Which records of the file would change or add a row, or 'too-many' past `maxChangedLines` lines to load. Returned
 * once this load holds its turn to merge, so that no other load changes a stored row between this answer and the merge.
 */
export async function findChangedRecords(
  connection: Connection,
  file: ExportFile,
  maxChangedLines: number,
  options: IngestOptions,
  reportChecking?: (bytesRead: number, records: number) => void,
): Promise<ChangedRecords | 'too-many'> {
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
    maxNeededLines: maxChangedLines,
  });
  return verdict ? { ...verdict, records } : 'too-many';
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
