/**
 * The fuzz test's child: `node read-mutations.ts DECODER COUNT FIXTURE SEED [FIXTURE SEED ...]` takes each FIXTURE in
 * turn and writes each of its COUNT mutations to RECON_FUZZ_DIR, opens it with openExport (bzip2Decoder DECODER, the
 * limits in RECON_FUZZ_LIMITS), reads every entry to its end and prints one JSON line per mutation, naming the
 * fixture: `read` with the sha256 of the bytes, `refused` with the ReconError's code and message, or `bad-error` for
 * anything else thrown. A mutation still unsettled after MUTATION_TIMEOUT_MS prints `hang` and ends the process with
 * 3. A crash (an uncaught exception, an unhandled rejection, the heap) ends it on its own; the parent sees which
 * mutation by the lines before, and starts another child for the fixtures after it.
 */
import { createHash } from 'node:crypto';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { IngestLimits } from '../../src/config/config.ts';
import { openExport } from '../../src/decompress/open-export.ts';
import { isReconError } from '../../src/errors.ts';
import { exportMutations } from '../support/export-mutations.ts';

const MUTATION_TIMEOUT_MS = 10_000;

type Outcome =
  | { outcome: 'read'; digest: string }
  | { outcome: 'refused'; code: string; message: string }
  | { outcome: 'bad-error'; message: string }
  | { outcome: 'hang' };

const [decoder, countText, ...fixtureSeeds] = process.argv.slice(2);
const directory = process.env['RECON_FUZZ_DIR'];
const limitsJson = process.env['RECON_FUZZ_LIMITS'];
if (
  (decoder !== 'auto' && decoder !== 'native' && decoder !== 'js') ||
  fixtureSeeds.length === 0 ||
  fixtureSeeds.length % 2 !== 0 ||
  !directory ||
  !limitsJson
) {
  throw new Error(
    'usage: RECON_FUZZ_DIR=DIR RECON_FUZZ_LIMITS=JSON node read-mutations.ts auto|native|js COUNT FIXTURE SEED [FIXTURE SEED ...]',
  );
}
// Loaded by the parent: importing the configuration's schema took half of a child's startup.
const limits = JSON.parse(limitsJson) as IngestLimits;

async function readEverything(file: string): Promise<Outcome> {
  try {
    const opened = await openExport(file, limits, { bzip2Decoder: decoder as 'auto' | 'native' | 'js' });
    const hash = createHash('sha256');
    try {
      for await (const entry of opened.entries) {
        hash.update(`${entry.name}\n`);
        for await (const chunk of await entry.open()) hash.update(chunk as Buffer);
      }
    } finally {
      await opened.close();
    }
    return { outcome: 'read', digest: hash.digest('hex') };
  } catch (error) {
    if (isReconError(error) && !error.message.includes('\n'))
      return { outcome: 'refused', code: error.code, message: error.message };
    return {
      outcome: 'bad-error',
      message: error instanceof Error ? `${error.name}: ${error.message} ${error.stack ?? ''}` : String(error),
    };
  }
}

function timeout(): { promise: Promise<Outcome>; cancel: () => void } {
  let timer: NodeJS.Timeout | undefined;
  const promise = new Promise<Outcome>((resolve) => {
    timer = setTimeout(() => resolve({ outcome: 'hang' }), MUTATION_TIMEOUT_MS);
  });
  return { promise, cancel: () => clearTimeout(timer) };
}

for (let n = 0; n < fixtureSeeds.length; n += 2) {
  const fixture = fixtureSeeds[n]!;
  const name = path.basename(fixture);
  const file = path.join(directory, name);
  // The same bytes read by the same decoder end the same way: a mutation repeating an earlier one's bytes (about one
  // in seven, half of an empty file's appends) is reported with that one's outcome instead of being read again.
  const outcomes = new Map<string, { index: number; result: Outcome }>();
  let index = 0;
  for (const mutation of exportMutations(readFileSync(fixture), Number(fixtureSeeds[n + 1]), Number(countText))) {
    const bytes = createHash('sha256').update(mutation.bytes).digest('hex');
    const earlier = outcomes.get(bytes);
    if (earlier) {
      process.stdout.write(
        `${JSON.stringify({ fixture: name, index, kind: mutation.kind, ...earlier.result, sameBytesAs: earlier.index, ms: 0 })}\n`,
      );
      index++;
      continue;
    }
    // A new file each time, the last one removed first: rewriting a file truncates it, and ext4 then writes it out to
    // the disk as it is closed (auto_da_alloc), a millisecond or more each of the thousands of mutations.
    rmSync(file, { force: true });
    writeFileSync(file, mutation.bytes);
    const started = performance.now();
    const limit = timeout();
    const result = await Promise.race([readEverything(file), limit.promise]);
    limit.cancel();
    process.stdout.write(
      `${JSON.stringify({ fixture: name, index, kind: mutation.kind, ...result, ms: Math.round(performance.now() - started) })}\n`,
    );
    if (result.outcome === 'hang') process.exit(3);
    outcomes.set(bytes, { index, result });
    index++;
  }
}
