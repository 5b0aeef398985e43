import { Readable } from 'node:stream';
import type { Connection } from '../db/database.ts';
import { exportColumnOf } from '../normalize/export-columns.ts';
import { planHeader } from '../normalize/header-plan.ts';
import { createScopeCheck } from '../normalize/row-scope.ts';
import { forEachEntry } from './export-entries.ts';
import type { ExportFile } from './export-file.ts';
import {
  beginFingerprints,
  classifyFingerprints,
  countStored,
  FINGERPRINT_COPY_SQL,
  fingerprintLine,
  fingerprintsRepeatIds,
  OUTSIDE_SCOPE_DIGEST,
} from './fingerprints.ts';
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
    const outsideScope = createScopeCheck(options.scope, plan);
    async function* lines(): AsyncGenerator<string> {
      let text = '';
      for await (const batch of parsed.records) {
        options.signal?.throwIfAborted();
        for (const record of batch) {
          // A record too short for its id still gets a fingerprint: no stored row matches it, so it is loaded, to be
          // rejected there with its reason. So is a record outside the file's scope, even one equal to its stored row
          // (another account's rows sent again to this token): loaded, it is rejected as a whole load rejects it.
          // A record in scope equal to another account's stored row cannot be: that row's account came from a record
          // naming it (outside this scope), or from its request's (fillFileAccount, which clears the digest).
          const id = record.values[idPosition] ?? '';
          const digest =
            outsideScope?.(record.values) === undefined ? recordDigest(record.values, seed) : OUTSIDE_SCOPE_DIGEST;
          text += fingerprintLine(entryIndex, record.line, id, digest);
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
    scoped: options.scope !== undefined,
  });
  return verdict ? { ...verdict, records } : 'too-many';
}
