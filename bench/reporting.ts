/**
 * `npm run bench:reporting [-- --orders N] [-- --database NAME] [-- --keep] [-- --json]`: the accountants' SQL and
 * `recon report` on a year's worth of history. Times every ```sql block of docs/reporting.md, the questions of
 * bench/reporting-questions.ts and `recon report` of the latest run in each format, on the database bench:history
 * builds (N orders, default 1,000,000, ten `reconcile --all` runs and an unchanged re-run), beside a reference
 * measured in the same run: a sequential scan of the current verdicts. Best of two of each, printed slowest first
 * against the targets of docs/benchmarks.md (1 s a query, 10 s a report).
 *
 * The database is built by bench:history (`--only postgres --keep`) and dropped at the end; with --keep, one already
 * there is read as it is and left, and one built is left. Every statement runs in a transaction rolled back; the
 * reports run only on a database already migrated by this version of recon, so that nothing is written.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { isMigrated } from '../src/db/migrate.ts';
import { openDatabase } from '../src/db/open-database.ts';
import { reportingSqlBlocks } from '../test/docs/reporting-sql.ts';
import { benchDatabases, databaseName, HISTORY_DATABASE } from './bench-database.ts';
import { buildRecon } from './build-recon.ts';
import { readHistory, readSamples, timeQuery } from './reporting-measure.ts';
import { docsQueries, exampleValuesLeft, type ReportingQuery } from './reporting-queries.ts';
import { reportingQuestions } from './reporting-questions.ts';
import {
  QUERY_TARGET_SECONDS,
  REPORT_TARGET_SECONDS,
  reportingJson,
  reportingTable,
  type Measured,
  type ReportingFigures,
} from './reporting-table.ts';
import { timed } from './timed.ts';

/** bench:history's ten runs and its unchanged re-run. */
const HISTORY_RUNS = 11;
const ROUNDS = 2;
const FORMATS = ['table', 'csv', 'json', 'html'] as const;
const REFERENCE = {
  name: 'a sequential scan of the current verdicts',
  sql: 'SELECT sum(at_risk_minor) FROM recon.verdicts',
};

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const cli = path.join(root, 'dist', 'cli', 'main.js');
const log = (message: string) => process.stderr.write(`bench: ${message}\n`);
const count = (n: number) => n.toLocaleString('en');

const { values: args } = parseArgs({
  options: {
    orders: { type: 'string', default: '1000000' },
    database: { type: 'string', default: HISTORY_DATABASE },
    // Reads the database left by an earlier run (or bench:history --keep) as it is, and leaves it.
    keep: { type: 'boolean', default: false },
    json: { type: 'boolean', default: false },
  },
});

/** bench:history, with its table on stderr with the rest of the progress; its temporary files under `tmpDir`. */
function buildHistory(database: string, orders: number, tmpDir: string): Promise<void> {
  const argv = ['bench/history.ts', '--only', 'postgres', '--keep', '--orders', String(orders)];
  log(`building database ${database} with bench:history (${argv.slice(1).join(' ')})`);
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...argv, '--database', database], {
      cwd: root,
      // Its --keep keeps the generated files too: in a folder of ours, removed at the end.
      env: { ...process.env, TMPDIR: tmpDir },
      stdio: ['ignore', 2, 2],
    });
    child.on('error', reject);
    child.on('close', (code) =>
      code === 0 ? resolve() : reject(new Error(`bench:history exited ${code}: its errors are above`)),
    );
  });
}

/** recon report of the run in one format, into a file of `dir` then removed: wall time, peak RSS, bytes. */
async function timeReport(url: string, runId: number, format: string, dir: string) {
  const out = path.join(dir, `report.${format}`);
  const argv = ['report', '--format', format, '--run', String(runId), '--out', out];
  const result = await timed(cli, argv, { ...process.env, DATABASE_URL: url });
  if (result.exitCode !== 0)
    throw new Error(`recon report --format ${format} exited ${result.exitCode}: ${result.stderr.trim().slice(-500)}`);
  const bytes = (await stat(out)).size;
  await rm(out);
  return { seconds: result.seconds, peakRssMb: result.peakRssMb, bytes };
}

async function measure(url: string, database: string, orders: number, workDir: string): Promise<ReportingFigures> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const history = await readHistory(client);
    if (history.unfinishedRuns > 0 || history.finishedRuns !== HISTORY_RUNS || history.orders !== orders)
      throw new Error(
        `database ${database} is not a whole history of ${count(orders)} orders: it holds ${count(history.orders)} ` +
          `orders and ${history.finishedRuns} finished runs of ${HISTORY_RUNS}, ${history.unfinishedRuns} unfinished ` +
          '(is bench:history still building it? or pass its --orders)',
      );
    const samples = await readSamples(client);
    log(`latest run ${samples.runId}; samples: ${JSON.stringify(samples)}`);
    const docs = docsQueries(reportingSqlBlocks(root), samples);
    for (const query of docs) {
      const left = exampleValuesLeft(query.sql, samples);
      if (left.length)
        throw new Error(`${query.name}: no substitute for ${left.join(', ')}; see bench/reporting-queries.ts`);
    }
    const queries: Array<{ kind: 'docs' | 'question'; query: ReportingQuery }> = [
      ...docs.map((query) => ({ kind: 'docs' as const, query })),
      ...reportingQuestions(samples).map((query) => ({ kind: 'question' as const, query })),
    ];
    const reference: number[] = [];
    const measured: Measured[] = [
      ...queries.map(({ kind, query }) => ({
        kind,
        name: query.name,
        command: query.sql,
        seconds: [],
        targetSeconds: QUERY_TARGET_SECONDS,
        rolledBack: query.writes || undefined,
      })),
      ...FORMATS.map((format) => ({
        kind: 'report' as const,
        name: `recon report --format ${format}`,
        command: `recon report --format ${format} --run ${samples.runId} --out <temporary file>`,
        seconds: [],
        targetSeconds: REPORT_TARGET_SECONDS,
      })),
    ];
    // Round after round, so that each measure meets the machine's load twice, at different moments.
    for (let round = 1; round <= ROUNDS; round++) {
      log(`round ${round} of ${ROUNDS}: the reference, ${queries.length} queries, ${FORMATS.length} reports`);
      reference.push((await timeQuery(client, { sql: REFERENCE.sql, before: [] })).seconds);
      for (const [i, { query }] of queries.entries()) {
        const { seconds, rows } = await timeQuery(client, query);
        measured[i]!.seconds.push(seconds);
        measured[i]!.rows = rows;
      }
      for (const [i, format] of FORMATS.entries()) {
        const m = measured[queries.length + i]!;
        const report = await timeReport(url, samples.runId, format, workDir);
        m.seconds.push(report.seconds);
        m.bytes = report.bytes;
        m.peakRssMb = Math.max(m.peakRssMb ?? 0, report.peakRssMb);
      }
    }
    return {
      serverVersion: history.serverVersion,
      database,
      orders: history.orders,
      runs: history.finishedRuns,
      samples,
      reference: { ...REFERENCE, seconds: reference },
      measured,
    };
  } finally {
    await client.end();
  }
}

/** Every command migrates at start: on a database of another version of recon, `recon report` would write. */
async function checkMigrated(url: string, database: string): Promise<void> {
  const opened = await openDatabase({ databaseUrl: url, dataDir: '' });
  try {
    if (!(await isMigrated(opened)))
      throw new Error(
        `database ${database} was migrated by another version of recon: recon report would migrate it; ` +
          'run this benchmark from the version that built it, or without --keep',
      );
  } finally {
    await opened.close();
  }
}

async function main(): Promise<void> {
  const orders = Number(args.orders);
  if (!Number.isSafeInteger(orders) || orders < 1)
    throw new Error(`--orders must be a positive integer, got '${args.orders}'`);
  const database = databaseName(args.database);
  const adminUrl = process.env.DATABASE_URL;
  if (!adminUrl)
    throw new Error('DATABASE_URL must point at a PostgreSQL server (e.g. postgres://root@127.0.0.1:5432/postgres)');
  buildRecon(root, log);
  const databases = benchDatabases(adminUrl, cli);
  const url = databases.url(database);
  const workDir = await mkdtemp(path.join(os.tmpdir(), 'recon-bench-reporting-'));
  let built = false;
  try {
    if (args.keep && (await databases.exists(database))) {
      log(`reading database ${database} as it is (--keep)`);
    } else {
      built = true;
      await buildHistory(database, orders, workDir);
    }
    await checkMigrated(url, database);
    const figures = await measure(url, database, orders, workDir);
    if (args.json) console.log(JSON.stringify(reportingJson(figures), null, 2));
    else console.log(reportingTable(figures));
  } finally {
    await rm(workDir, { recursive: true, force: true });
    if (built && !args.keep) await databases.drop(database);
    else log(`kept database ${database}`);
  }
}

try {
  await main();
} catch (error) {
  console.error(`bench: ${(error as Error).message}`);
  process.exitCode = 1;
}
