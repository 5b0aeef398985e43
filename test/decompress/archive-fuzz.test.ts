import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { crc32 } from 'node:zlib';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/config.ts';
import { detectCompression } from '../../src/decompress/detect-compression.ts';
import { findExecutable } from '../../src/decompress/find-executable.ts';
import { COMPILE_CACHE, NODE_FLAGS } from '../cli/run-recon.ts';

/**
 * Every fixture, mutated (test/support/export-mutations.ts: fields of its format overwritten with hurtful values,
 * bits flipped, bytes set, inserted or cut, the file truncated or extended), each mutation opened with openExport
 * and read to the end in a child process with recon's heap flags (read-mutations.ts, a child per decoder and batch of
 * fixtures, another for the rest of a batch after one it died in). Each must end in a read or a one-line ReconError;
 * the child must exit 0: an uncaught exception, an unhandled rejection, running out of heap or a hang kills it, and
 * the report names the fixture and mutation. bzip2
 * fixtures run through the JavaScript decoder, lbzip2 and bzip2 (each alone on PATH); whichever read a
 * mutation must give the same bytes. Seeded: RECON_FUZZ_SEED and RECON_FUZZ_MUTATIONS reproduce or widen a run.
 */
const FIXTURES = path.join(import.meta.dirname, '..', '..', 'fixtures');
const CHILD = path.join(import.meta.dirname, 'read-mutations.ts');
const SEED = Number(process.env['RECON_FUZZ_SEED'] ?? 20_261_126);
const MUTATIONS = Number(process.env['RECON_FUZZ_MUTATIONS'] ?? 250);
/** A child that prints nothing for this long is stuck in something its own per-mutation timer cannot interrupt. */
const SILENCE_MS = 30_000;
/** Children at a time: the test machines have two cores. */
const PARALLEL = 2;
/** Fixtures a child reads in turn: a child's startup (a third of a second) was paid once per fixture. */
const BATCH = 8;
/** Low enough that the bombs stop quickly at every mutation; no fixture comes near it. */
const MAX_UNCOMPRESSED_BYTES = 4 * 1024 * 1024;
const LIMITS = loadConfig({ ...process.env, RECON_MAX_UNCOMPRESSED_BYTES: String(MAX_UNCOMPRESSED_BYTES) }).limits;

const scratch = mkdtempSync(path.join(tmpdir(), 'recon-fuzz-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

interface Variant {
  readonly name: string;
  readonly decoder: 'auto' | 'native' | 'js';
  /** PATH for the child: a folder holding only this bzip2 binary, for the native variants. */
  readonly path?: string;
}

const nativeVariants: Variant[] = [];
for (const program of ['lbzip2', 'bzip2']) {
  const executable = await findExecutable([program]);
  if (executable === undefined) continue;
  const bin = path.join(scratch, `bin-${program}`);
  mkdirSync(bin);
  symlinkSync(executable, path.join(bin, program));
  nativeVariants.push({ name: program, decoder: 'native', path: bin });
}

const fixtures = readdirSync(FIXTURES)
  .filter((name) => name !== 'README.md')
  .sort();
const variantsOf = (name: string): Variant[] =>
  detectCompression(readFileSync(path.join(FIXTURES, name)).subarray(0, 4)) === 'bzip2'
    ? [{ name: 'js', decoder: 'js' }, ...nativeVariants]
    : [{ name: 'auto', decoder: 'auto' }];
const seedOf = (name: string) => (SEED ^ crc32(name)) >>> 0;

interface Line {
  fixture: string;
  index: number;
  kind: string;
  outcome: 'read' | 'refused' | 'bad-error' | 'hang';
  digest?: string;
  code?: string;
  message?: string;
}

interface ChildRun {
  variant: Variant;
  lines: Line[];
  exit: string;
  stderr: string;
}

let running = 0;
const waiting: (() => void)[] = [];
async function limited<T>(work: () => Promise<T>): Promise<T> {
  if (running >= PARALLEL) await new Promise<void>((resolve) => waiting.push(resolve));
  running++;
  try {
    return await work();
  } finally {
    running--;
    waiting.shift()?.();
  }
}

/** One child reading `fixtures` in turn with `variant`: the lines of all of them, and how the child ended. */
function runChild(
  fixtures: readonly string[],
  variant: Variant,
): Promise<{ lines: Line[]; exit: string; stderr: string }> {
  const directory = mkdtempSync(path.join(scratch, 'run-'));
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    RECON_FUZZ_DIR: directory,
    RECON_FUZZ_LIMITS: JSON.stringify(LIMITS),
    NODE_COMPILE_CACHE: COMPILE_CACHE,
  };
  if (variant.path !== undefined) env['PATH'] = variant.path;
  const child = spawn(
    process.execPath,
    [
      ...NODE_FLAGS,
      CHILD,
      variant.decoder,
      String(MUTATIONS),
      ...fixtures.flatMap((fixture) => [path.join(FIXTURES, fixture), String(seedOf(fixture))]),
    ],
    {
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let stdout = '';
  let stderr = '';
  let silent = false;
  let watchdog = setTimeout(() => ((silent = true), child.kill('SIGKILL')), SILENCE_MS);
  child.stdout.setEncoding('utf8').on('data', (text: string) => {
    stdout += text;
    clearTimeout(watchdog);
    watchdog = setTimeout(() => ((silent = true), child.kill('SIGKILL')), SILENCE_MS);
  });
  child.stderr.setEncoding('utf8').on('data', (text: string) => (stderr += text));
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code, signal) => {
      clearTimeout(watchdog);
      const lines = stdout
        .split('\n')
        .filter((line) => line !== '')
        .map((line) => JSON.parse(line) as Line);
      const exit = silent
        ? `silent for ${SILENCE_MS} ms`
        : signal !== null
          ? `killed by ${signal}`
          : `exit code ${code}`;
      resolve({ lines, exit, stderr });
    });
  });
}

/**
 * Each fixture's run of `variant`: a fixture whose mutations all printed ended as the child should; the one the
 * child ended in gets its exit and stderr, and the fixtures after it a child of their own.
 */
async function runBatch(variant: Variant, batch: readonly string[]): Promise<Map<string, ChildRun>> {
  const runs = new Map<string, ChildRun>();
  let left = batch;
  while (left.length > 0) {
    const child = await runChild(left, variant);
    const ended = left.findIndex(
      (fixture, n) =>
        child.lines.filter((line) => line.fixture === fixture).length !== MUTATIONS ||
        (n === left.length - 1 && child.exit !== 'exit code 0'),
    );
    for (const [n, fixture] of left.entries()) {
      if (ended !== -1 && n > ended) break;
      const lines = child.lines.filter((line) => line.fixture === fixture);
      runs.set(
        fixture,
        n === ended
          ? { variant, lines, exit: child.exit, stderr: child.stderr }
          : { variant, lines, exit: 'exit code 0', stderr: '' },
      );
    }
    left = ended === -1 ? [] : left.slice(ended + 1);
  }
  return runs;
}

let started: Map<string, Promise<ChildRun>> | undefined;
/** The run of `fixture` through `variant`; the first call starts every batch, the bzip2 decoders' (the slowest) first. */
function runOf(fixture: string, variant: Variant): Promise<ChildRun> {
  started ??= startBatches();
  return started.get(`${variant.name} ${fixture}`)!;
}

function startBatches(): Map<string, Promise<ChildRun>> {
  const byVariant = new Map<string, { variant: Variant; fixtures: string[] }>();
  for (const fixture of fixtures) {
    for (const variant of variantsOf(fixture)) {
      const entry = byVariant.get(variant.name) ?? { variant, fixtures: [] };
      entry.fixtures.push(fixture);
      byVariant.set(variant.name, entry);
    }
  }
  const runs = new Map<string, Promise<ChildRun>>();
  const groups = [...byVariant.values()].sort(
    (a, b) => Number(a.variant.decoder === 'auto') - Number(b.variant.decoder === 'auto'),
  );
  for (const { variant, fixtures: all } of groups) {
    for (let n = 0; n < all.length; n += BATCH) {
      const batch = all.slice(n, n + BATCH);
      const done = limited(() => runBatch(variant, batch));
      for (const fixture of batch) {
        const run = done.then((byFixture) => byFixture.get(fixture)!);
        // Awaited by the fixture's test; one filtered out of the run must not leave an unhandled rejection.
        run.catch(() => {});
        runs.set(`${variant.name} ${fixture}`, run);
      }
    }
  }
  return runs;
}

/** What went wrong in a run, one line each, naming what reproduces it. */
function problems(fixture: string, run: ChildRun): string[] {
  const where = `${fixture} (${run.variant.name}, seed ${seedOf(fixture)})`;
  const found = run.lines
    .filter((line) => line.outcome !== 'read' && line.outcome !== 'refused')
    .map((line) => `${where} mutation ${line.index} [${line.kind}]: ${line.outcome} ${line.message ?? ''}`);
  if (run.exit !== 'exit code 0' || run.lines.length !== MUTATIONS) {
    const next = run.lines.length;
    found.push(
      `${where}: ${run.exit} after ${next} of ${MUTATIONS} mutations (so at mutation ${next}): ${run.stderr.trim().split('\n').slice(0, 6).join(' | ')}`,
    );
  }
  return found;
}

/** Mutations that two decoders both read, to different bytes. */
function disagreements(fixture: string, runs: readonly ChildRun[]): string[] {
  const found: string[] = [];
  for (let index = 0; index < MUTATIONS; index++) {
    const reads = runs.flatMap((run) =>
      run.lines[index]?.outcome === 'read' ? [[run.variant.name, run.lines[index]!.digest] as const] : [],
    );
    if (new Set(reads.map(([, digest]) => digest)).size > 1) {
      found.push(
        `${fixture} (seed ${seedOf(fixture)}) mutation ${index} [${runs[0]!.lines[index]!.kind}]: ${reads.map(([name, digest]) => `${name} ${digest!.slice(0, 12)}`).join(', ')}`,
      );
    }
  }
  return found;
}

describe(`openExport on ${MUTATIONS} mutations of every fixture`, () => {
  it('covers every fixture, bzip2 through each decoder available', () => {
    expect(fixtures.length).toBeGreaterThanOrEqual(34);
    expect(nativeVariants.length).toBeGreaterThan(0);
  });

  it.concurrent.each(fixtures)(
    '%s: every mutation is read or refused in one line, and no process dies',
    async (fixture) => {
      const runs = await Promise.all(variantsOf(fixture).map((variant) => runOf(fixture, variant)));
      expect(runs.flatMap((run) => problems(fixture, run))).toEqual([]);
      expect(disagreements(fixture, runs)).toEqual([]);
      // Some mutations must get through: a fuzz run that refuses all of them at the first check proves little.
      if (!/^(empty|truncated|corrupt|bomb|encrypted)/.test(fixture))
        expect(runs[0]!.lines.some((line) => line.outcome === 'read')).toBe(true);
    },
    300_000,
  );
});
