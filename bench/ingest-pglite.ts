/**
 * `npm run bench:pglite [-- --rows N]`: recon on embedded PGlite against its 512 MB target, the container it is
 * meant to fit. Builds recon, generates an N-row export (default 1,000,000), gzips it, then measures under
 * /usr/bin/time, as users run them (the built executable, so the shebang's V8 flags apply) and with
 * DATABASE_URL removed: `recon ingest` of the gzip file into a new PGlite data directory, and `recon demo`.
 * Neither spawns a process of its own (gzip is decompressed in process), so the peak RSS is all of recon's.
 *
 * `measurePgliteIngest` and `measurePgliteDemo` are exported for bench/ingest.ts's PGlite case.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, statSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { buildRecon } from './build-recon.ts';
import { generateExport } from './generate-export.ts';
import { timed } from './timed.ts';

export const PGLITE_TARGET_RSS_MB = 512;

export interface PgliteMeasure {
  seconds: number;
  peakRssMb: number;
}

/** `recon ingest --json FILE` into a new PGlite data directory under `workDir`, removed afterwards. */
export async function measurePgliteIngest(
  cli: string,
  gzFile: string,
  workDir: string,
): Promise<PgliteMeasure & { summary: Record<string, unknown> }> {
  const { seconds, peakRssMb, stdout } = await inNewDataDir(workDir, (env) =>
    timedOk(cli, ['ingest', '--json', gzFile], env, [0, 3]),
  );
  return {
    seconds,
    peakRssMb,
    summary: JSON.parse(stdout.trim().split('\n').pop() ?? '{}') as Record<string, unknown>,
  };
}

/** `recon demo`, whose database is always a new one (under RECON_DATA_DIR/demo), in a data directory of its own. */
export async function measurePgliteDemo(cli: string, workDir: string): Promise<PgliteMeasure> {
  const { seconds, peakRssMb } = await inNewDataDir(workDir, (env) => timedOk(cli, ['demo'], env, [0]));
  return { seconds, peakRssMb };
}

async function inNewDataDir<T>(workDir: string, run: (env: NodeJS.ProcessEnv) => Promise<T>): Promise<T> {
  mkdirSync(workDir, { recursive: true });
  const dataDir = await mkdtemp(path.join(workDir, 'pglite-'));
  const { DATABASE_URL: _ignored, ...env } = process.env;
  try {
    return await run({ ...env, RECON_DATA_DIR: dataDir });
  } finally {
    await rm(dataDir, { recursive: true, force: true });
  }
}

async function timedOk(command: string, argv: string[], env: NodeJS.ProcessEnv, okCodes: number[]) {
  const result = await timed(command, argv, env);
  if (!okCodes.includes(result.exitCode))
    throw new Error(
      `${path.basename(command)} ${argv[0]} exited ${result.exitCode}: ${result.stderr.trim().slice(-500)}`,
    );
  return result;
}

async function main(): Promise<void> {
  const { values: args } = parseArgs({ options: { rows: { type: 'string', default: '1000000' } } });
  const rows = Number(args.rows);
  if (!Number.isSafeInteger(rows) || rows < 1) throw new Error(`--rows must be a positive integer, got '${args.rows}'`);
  const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
  const work = path.join(root, 'bench', '.work');
  const cli = path.join(root, 'dist', 'cli', 'main.js');
  const log = (message: string) => process.stderr.write(`bench: ${message}\n`);

  buildRecon(root, log);
  mkdirSync(work, { recursive: true });
  // Names of its own: bench:ingest may be writing its export-N.csv at the same time.
  const csv = path.join(work, `pglite-export-${rows}.csv`);
  log(`generating ${rows.toLocaleString('en')} rows`);
  const bytes = await generateExport(csv, rows);
  execFileSync('sh', ['-c', `gzip -c '${csv}' > '${csv}.gz'`]);
  // One at a time: the two would compete for the same cores.
  log('recon ingest of the gzip file into a new PGlite database');
  const ingest = await measurePgliteIngest(cli, `${csv}.gz`, work);
  log('recon demo');
  const demo = await measurePgliteDemo(cli, work);

  const line = (name: string, m: PgliteMeasure) =>
    [
      name.padEnd(34),
      m.seconds.toFixed(2).padStart(7),
      `${m.peakRssMb.toFixed(0)} MB`.padStart(9),
      `<${PGLITE_TARGET_RSS_MB} MB`.padStart(8),
      m.peakRssMb < PGLITE_TARGET_RSS_MB ? ' ok' : ' MISSED',
    ].join(' ');
  console.log(
    [
      `PGlite benchmark: ${rows.toLocaleString('en')} rows, ${(bytes / 1e6).toFixed(1)} MB of csv, ${(statSync(`${csv}.gz`).size / 1e6).toFixed(1)} MB gzip, node ${process.version}`,
      'case                                     s  peak RSS   target  status',
      line('ingest gzip into a new database', ingest),
      `${''.padEnd(34)} ${Math.round(rows / ingest.seconds).toLocaleString('en')} rows/s; recon: ${JSON.stringify(ingest.summary)}`,
      line('recon demo', demo),
    ].join('\n'),
  );
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) await main();
