/**
 * `npm run bench:reporting [-- --only postgres|pglite] [-- --orders N] [-- --pglite-orders N] [-- --database NAME]
 * [-- --keep] [-- --pglite-dir DIR] [-- --json]`: the accountants' SQL and `recon report` on a year's worth of history.
 * Times every ```sql block of docs/reporting.md, the questions of bench/reporting-questions.ts and `recon report` of
 * the latest run in each format, on the databases bench:history builds (ten `reconcile --all` runs and an unchanged
 * re-run; PostgreSQL at N orders, default 1,000,000, then PGlite at 100,000), beside a reference measured in the same
 * run: a sequential scan of the current verdicts. Best of two of each, printed slowest first against the targets of
 * docs/benchmarks.md (1 s a query, 10 s a report), one table per backend.
 *
 * Each database is built by bench:history (`--only postgres|pglite --keep`) and removed at the end; with --keep, one
 * already there is read as it is and left, and one built is left. Every statement runs in a transaction rolled back;
 * the reports run only on a database already migrated by this version of recon, so that nothing is written.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { isMigrated } from '../src/db/migrate.ts';
import { openDatabase, type DatabaseOptions } from '../src/db/open-database.ts';
import { DEFAULT_REPORTING_ROLES } from '../src/db/reporting-roles.ts';
import { reportingSqlBlocks } from '../test/docs/reporting-sql.ts';
import { benchDatabases } from './bench-database.ts';
import { buildRecon } from './build-recon.ts';
import { readHistory, readSamples, timeQuery } from './reporting-measure.ts';
import { reportingOptions } from './reporting-options.ts';
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
import { pgliteSession, postgresSession, withSession, type SqlSession } from './sql-session.ts';
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

const args = reportingOptions(process.argv.slice(2), os.tmpdir());

/** One history to measure: how this process reads it, and how recon's commands reach it. */
interface Backend {
  name: ReportingFigures['backend'];
  /** The database's name, or recon's data directory. */
  database: string;
  orders: number;
  /** What openDatabase and recon's environment are given. */
  options: DatabaseOptions;
  env: NodeJS.ProcessEnv;
  session(): Promise<SqlSession>;
  /** Whether the statements run as the accountants' roles: PGlite has one user, and recon makes no roles there. */
  roles: boolean;
}

/** bench:history, with its table on stderr with the rest of the progress; its temporary files under `tmpDir`. */
function buildHistory(argv: string[], tmpDir: string): Promise<void> {
  log(`building with bench:history (${argv.join(' ')})`);
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['bench/history.ts', '--keep', ...argv], {
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

/**
 * bench:history's PostgreSQL database: with --keep, read as it is when there; otherwise built, and dropped at the end
 * unless --keep (`cleanups` is run whatever happens).
 */
async function postgresHistory(
  adminUrl: string,
  database: string,
  orders: number,
  workDir: string,
  cleanups: Array<() => Promise<void>>,
): Promise<Backend> {
  const databases = benchDatabases(adminUrl, cli);
  const url = databases.url(database);
  if (args.keep && (await databases.exists(database))) log(`reading database ${database} as it is (--keep)`);
  else {
    cleanups.push(async () => {
      if (args.keep) log(`kept database ${database}`);
      else await databases.drop(database);
    });
    await buildHistory(['--only', 'postgres', '--orders', String(orders), '--database', database], workDir);
  }
  return {
    name: 'PostgreSQL',
    database,
    orders,
    options: { databaseUrl: url, dataDir: '' },
    env: { ...process.env, DATABASE_URL: url },
    session: () => postgresSession(url),
    roles: true,
  };
}

/**
 * bench:history's PGlite database, in recon's data directory `dataDir`: with --keep, read as it is when there;
 * otherwise built (the caller removes a temporary `dataDir`).
 */
async function pgliteHistory(dataDir: string, orders: number, workDir: string): Promise<Backend> {
  if (args.keep && existsSync(path.join(dataDir, 'pgdata', 'PG_VERSION')))
    log(`reading the PGlite database in ${dataDir} as it is (--keep)`);
  else if (existsSync(dataDir))
    throw new Error(`${dataDir} holds no PGlite database: remove it, or name another with --pglite-dir`);
  else {
    await buildHistory(['--only', 'pglite', '--pglite-orders', String(orders), '--pglite-dir', dataDir], workDir);
    if (args.keep) log(`kept the PGlite database in ${dataDir}`);
  }
  const { DATABASE_URL: _postgres, ...env } = process.env;
  return {
    name: 'PGlite',
    database: dataDir,
    orders,
    options: { databaseUrl: undefined, dataDir },
    // As users run recon on PGlite: no DATABASE_URL, the data directory in RECON_DATA_DIR.
    env: { ...env, RECON_DATA_DIR: dataDir },
    session: () => pgliteSession(dataDir),
    roles: false,
  };
}

/** recon report of the run in one format, into a file of `dir` then removed: wall time, peak RSS, bytes. */
async function timeReport(backend: Backend, runId: number, format: string, dir: string) {
  const out = path.join(dir, `report.${format}`);
  const argv = ['report', '--format', format, '--run', String(runId), '--out', out];
  const result = await timed(cli, argv, backend.env);
  if (result.exitCode !== 0)
    throw new Error(`recon report --format ${format} exited ${result.exitCode}: ${result.stderr.trim().slice(-500)}`);
  const bytes = (await stat(out)).size;
  await rm(out);
  return { seconds: result.seconds, peakRssMb: result.peakRssMb, bytes };
}

async function measure(backend: Backend, workDir: string): Promise<ReportingFigures> {
  const { history, samples } = await withSession(backend.session, async (session) => {
    const history = await readHistory(session);
    if (history.unfinishedRuns > 0 || history.finishedRuns !== HISTORY_RUNS || history.orders !== backend.orders)
      throw new Error(
        `${backend.database} is not a whole history of ${count(backend.orders)} orders: it holds ` +
          `${count(history.orders)} orders and ${history.finishedRuns} finished runs of ${HISTORY_RUNS}, ` +
          `${history.unfinishedRuns} unfinished (is bench:history still building it? or pass its orders)`,
      );
    return { history, samples: await readSamples(session) };
  });
  log(`${backend.name}: latest run ${samples.runId}; samples: ${JSON.stringify(samples)}`);
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
  // Round after round, so that each measure meets the machine's load twice, at different moments. The session is
  // closed before the reports: recon's process opens PGlite's database, which one process holds at a time.
  for (let round = 1; round <= ROUNDS; round++) {
    log(
      `${backend.name}, round ${round} of ${ROUNDS}: the reference, ${queries.length} queries, ${FORMATS.length} reports`,
    );
    await withSession(backend.session, async (session) => {
      reference.push((await timeQuery(session, { sql: REFERENCE.sql, before: [] })).seconds);
      for (const [i, { query }] of queries.entries()) {
        const { seconds, rows } = await timeQuery(session, { ...query, role: backend.roles ? query.role : undefined });
        measured[i]!.seconds.push(seconds);
        measured[i]!.rows = rows;
      }
    });
    for (const [i, format] of FORMATS.entries()) {
      const m = measured[queries.length + i]!;
      const report = await timeReport(backend, samples.runId, format, workDir);
      m.seconds.push(report.seconds);
      m.bytes = report.bytes;
      m.peakRssMb = Math.max(m.peakRssMb ?? 0, report.peakRssMb);
    }
  }
  return {
    backend: backend.name,
    serverVersion: history.serverVersion,
    database: backend.database,
    runAs: backend.roles
      ? `the accountants' roles (SET LOCAL ROLE): ${DEFAULT_REPORTING_ROLES.reader}, ` +
        `${DEFAULT_REPORTING_ROLES.accountant} for reporting.exception_action`
      : `PGlite's one user, ${history.user} (recon makes no roles there)`,
    orders: history.orders,
    runs: history.finishedRuns,
    samples,
    reference: { ...REFERENCE, seconds: reference },
    measured,
  };
}

/** Every command migrates at start: on a database of another version of recon, `recon report` would write. */
async function checkMigrated(backend: Backend): Promise<void> {
  const opened = await openDatabase(backend.options);
  try {
    if (!(await isMigrated(opened)))
      throw new Error(
        `${backend.database} was migrated by another version of recon: recon report would migrate it; ` +
          'run this benchmark from the version that built it, or without --keep',
      );
  } finally {
    await opened.close();
  }
}

async function main(): Promise<void> {
  const adminUrl = process.env.DATABASE_URL;
  if (args.backends.includes('postgres') && !adminUrl)
    throw new Error(
      'DATABASE_URL must point at a PostgreSQL server (e.g. postgres://root@127.0.0.1:5432/postgres), or pass --only pglite',
    );
  buildRecon(root, log);
  const workDir = await mkdtemp(path.join(os.tmpdir(), 'recon-bench-reporting-'));
  const cleanups: Array<() => Promise<void>> = [];
  const results: ReportingFigures[] = [];
  try {
    for (const name of args.backends) {
      const backend =
        name === 'postgres'
          ? await postgresHistory(adminUrl!, args.database, args.orders, workDir, cleanups)
          : await pgliteHistory(args.pgliteDir ?? path.join(workDir, 'pglite-data'), args.pgliteOrders, workDir);
      await checkMigrated(backend);
      results.push(await measure(backend, workDir));
    }
  } finally {
    for (const cleanup of cleanups) await cleanup();
    await rm(workDir, { recursive: true, force: true });
  }
  if (args.json) console.log(JSON.stringify({ phases: results.map(reportingJson) }, null, 2));
  else console.log(results.map(reportingTable).join('\n\n'));
}

try {
  await main();
} catch (error) {
  console.error(`bench: ${(error as Error).message}`);
  process.exitCode = 1;
}
