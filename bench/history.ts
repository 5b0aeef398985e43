/**
 * `npm run bench:history [-- --orders N] [-- --pglite-orders N] [-- --only postgres|pglite] [-- --json] [-- --keep]
 * [-- --database NAME] [-- --pglite-dir DIR]`:
 * a year of nightly runs in ten. recon reconciles the same orders ten times, one day apart, with 1% of the orders
 * changed before each of runs 2..10 as production changes them (bench/history-changes.ts), then once more with
 * nothing changed. Measured: the storage each reconcile command adds to schema recon, its wall time, the reporting
 * queries after run 1 and after run 10, and the bare SQL join of bench:reconcile on the same data. Printed as one
 * table per backend against the targets of docs/benchmarks.md.
 *
 * On PostgreSQL (DATABASE_URL, N orders, default 1,000,000) the data is COPYed as bench:reconcile loads it; on
 * PGlite (default 100,000 orders) it goes through `recon ingest` and `recon import-orders`. The changes always go
 * through recon's commands. Needs psql for PostgreSQL's reference.
 */
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { benchDatabases, databaseName, HISTORY_DATABASE } from './bench-database.ts';
import { buildRecon } from './build-recon.ts';
import { asOfOfRun, historyChanges, type ChangeStep } from './history-changes.ts';
import { grownTables, median, medianQueryMs, reconStorage, totalBytes, type TimedQuery } from './history-measure.ts';
import { historyJson, historyTable, megabytes, type HistoryFigures, type RunFigures } from './history-report.ts';
import { loadReconcileData } from './load-reconcile-data.ts';
import { REFERENCE_RECONCILE, REFERENCE_TABLE } from './reconcile-reference-sql.ts';
import { writeScenarioFiles } from './scenario-csv.ts';
import { pgliteSession, postgresSession, withSession, type SqlSession } from './sql-session.ts';
import { timed, type Measure } from './timed.ts';

const RUNS = 10;
const REFERENCE_TIMES = 3;

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const cli = path.join(root, 'dist', 'cli', 'main.js');
const PGLITE_REFERENCE = path.join(root, 'bench', 'pglite-reference.ts');
const log = (message: string) => process.stderr.write(`bench: ${message}\n`);
const count = (n: number) => n.toLocaleString('en');
const size = (bytes: number) => (Math.abs(bytes) < 100_000 ? `${Math.round(bytes / 1000)} kB` : megabytes(bytes));

const { values: args } = parseArgs({
  options: {
    orders: { type: 'string', default: '1000000' },
    'pglite-orders': { type: 'string', default: '100000' },
    only: { type: 'string' },
    json: { type: 'boolean', default: false },
    // Leaves the database and the generated files in place for a look.
    keep: { type: 'boolean', default: false },
    // Another name than the default's, for a second history beside a kept one (bench:reporting builds one so).
    database: { type: 'string', default: HISTORY_DATABASE },
    // recon's data directory for the PGlite database, instead of one in the work directory: a new one, for
    // bench:reporting to find it where it asked (kept with --keep, removed otherwise, as --database's).
    'pglite-dir': { type: 'string' },
  },
});

/** How one backend is reached: recon's environment, a session of this process, the reference's timing. */
interface Backend {
  name: HistoryFigures['backend'];
  env: NodeJS.ProcessEnv;
  session(): Promise<SqlSession>;
  /** Seconds of one run of the bare SQL join, from a clean state. */
  reference(): Promise<number>;
  drop(): Promise<void>;
}

const QUERIES = (orderId: string): TimedQuery[] => [
  { name: 'count(*) reporting.reconciliation', sql: 'select count(*) from reporting.reconciliation' },
  { name: 'count(*) reporting.exceptions', sql: 'select count(*) from reporting.exceptions' },
  { name: '* reporting.daily_summary', sql: 'select * from reporting.daily_summary' },
  { name: '* reporting.runs', sql: 'select * from reporting.runs' },
  {
    name: "one order's verdict",
    sql: 'select * from reporting.reconciliation where order_id = $1',
    params: [orderId],
  },
];
const ONE_ORDER = "one order's verdict";

function positive(name: string, value: string): number {
  const n = Number(value);
  if (!Number.isSafeInteger(n) || n < 1) throw new Error(`--${name} must be a positive integer, got '${value}'`);
  return n;
}

async function recon(backend: Backend, argv: string[], okCodes = [0]): Promise<Measure> {
  // Run as the executable, as users do, so the shebang's V8 flags apply.
  const result = await timed(cli, argv, backend.env);
  if (!okCodes.includes(result.exitCode))
    throw new Error(`recon ${argv[0]} exited ${result.exitCode}: ${result.stderr.trim().slice(-500)}`);
  return result;
}

/** The node options of recon's executable, from its shebang line. */
const shebangFlags = () =>
  readFileSync(cli, 'utf8')
    .split('\n', 1)[0]!
    .split(' ')
    .filter((word) => word.startsWith('--'));

const lastJson = (stdout: string) => JSON.parse(stdout.trim().split('\n').pop() ?? '{}') as Record<string, unknown>;

async function postgresBackend(
  adminUrl: string,
  database: string,
  orders: number,
): Promise<{ backend: Backend; transactions: number }> {
  const databases = benchDatabases(adminUrl, cli);
  log(`creating and migrating database ${database}`);
  const url = await databases.fresh(database);
  log(`loading ${count(orders)} orders and their transactions by COPY, then VACUUM ANALYZE`);
  const loaded = await loadReconcileData(url, orders);
  const backend: Backend = {
    name: 'PostgreSQL',
    env: { ...process.env, DATABASE_URL: url },
    session: () => postgresSession(url),
    async reference() {
      await withSession(backend.session, async (s) => {
        await s.query(`DROP TABLE IF EXISTS ${REFERENCE_TABLE}`);
        await s.query('CHECKPOINT');
      });
      const result = await timed('psql', ['-qX', '-v', 'ON_ERROR_STOP=1', url, '-c', REFERENCE_RECONCILE]);
      if (result.exitCode !== 0) throw new Error(`reference failed: ${result.stderr.trim()}`);
      return result.seconds;
    },
    drop: () => databases.drop(database),
  };
  return { backend, transactions: loaded.transactions };
}

async function pgliteBackend(
  orders: number,
  workDir: string,
  dataDir: string,
): Promise<{ backend: Backend; transactions: number }> {
  const { DATABASE_URL: _postgres, ...env } = process.env;
  const backend: Backend = {
    name: 'PGlite',
    env: { ...env, RECON_DATA_DIR: dataDir },
    session: () => pgliteSession(dataDir),
    // No psql on PGlite: a process of its own opens the database and runs the statement, as psql -c does, with
    // the V8 flags of recon's shebang (PGlite's speed depends on them).
    async reference() {
      await withSession(backend.session, async (s) => {
        await s.query(`DROP TABLE IF EXISTS ${REFERENCE_TABLE}`);
        await s.query('CHECKPOINT');
      });
      const result = await timed(process.execPath, [...shebangFlags(), PGLITE_REFERENCE, dataDir], backend.env);
      if (result.exitCode !== 0) throw new Error(`reference failed: ${result.stderr.trim()}`);
      return result.seconds;
    },
    drop: () => rm(dataDir, { recursive: true, force: true }),
  };
  const exportFile = path.join(workDir, 'export.csv');
  const ordersFile = path.join(workDir, 'orders.csv');
  log(`writing ${count(orders)} orders and their transactions as an export file and an orders csv`);
  const { transactions } = await writeScenarioFiles(orders, exportFile, ordersFile);
  log(`recon ingest of ${count(transactions)} transactions into a new PGlite database`);
  await recon(backend, ['ingest', '--json', '--timezone', 'UTC', exportFile]);
  log(`recon import-orders of ${count(orders)} orders`);
  await recon(backend, ['import-orders', '--json', ordersFile]);
  // As bench:reconcile's load ends, so that both backends start from settled statistics.
  await withSession(backend.session, async (s) => {
    await s.query('VACUUM ANALYZE recon.orders');
    await s.query('VACUUM ANALYZE recon.transactions');
  });
  return { backend, transactions };
}

/** The changes before a run, through recon's own commands; not part of any measure. */
async function applyChanges(backend: Backend, step: ChangeStep, workDir: string): Promise<void> {
  const name = `run-${String(step.run).padStart(2, '0')}`;
  const exportFile = path.join(workDir, `changes-${name}-export.csv`);
  const ordersFile = path.join(workDir, `changes-${name}-orders.csv`);
  await writeFile(exportFile, step.exportCsv);
  await writeFile(ordersFile, step.ordersCsv);
  const ingest = lastJson((await recon(backend, ['ingest', '--json', '--timezone', 'UTC', exportFile])).stdout);
  const imported = lastJson((await recon(backend, ['import-orders', '--json', ordersFile])).stdout);
  const changedRows = Number(ingest.inserted) + Number(ingest.updated);
  const changedOrders = Number(imported.updated);
  log(
    `changes before run ${step.run}: ${count(step.orderIds.length)} orders (${JSON.stringify(step.kinds)}); ` +
      `ingest inserted ${ingest.inserted as number}, updated ${ingest.updated as number}; ` +
      `import-orders updated ${imported.updated as number}`,
  );
  // A change recon did not take would make the next run measure less than the scenario says.
  if (changedRows !== step.exportRows || changedOrders !== step.orderRows)
    throw new Error(
      `the changes before run ${step.run} did not all load: ${changedRows} of ${step.exportRows} transactions, ` +
        `${changedOrders} of ${step.orderRows} orders`,
    );
}

/** One `recon reconcile --all` with the storage of schema recon read right before and right after it. */
async function measuredRun(backend: Backend, run: number, asOf: string): Promise<RunFigures> {
  const before = await withSession(backend.session, reconStorage);
  const result = await recon(backend, ['reconcile', '--all', '--as-of', asOf, '--json']);
  const after = await withSession(backend.session, reconStorage);
  const summary = lastJson(result.stdout) as { ordersInScope: number; lifecycle: RunFigures['lifecycle'] };
  const figures: RunFigures = {
    run,
    asOf,
    seconds: result.seconds,
    addedBytes: totalBytes(after) - totalBytes(before),
    grown: grownTables(before, after),
    ordersInScope: summary.ordersInScope,
    lifecycle: summary.lifecycle,
  };
  log(
    `${run > RUNS ? 'unchanged re-run' : `run ${run}`} as of ${asOf}: ${result.seconds.toFixed(2)} s, ` +
      `${megabytes(figures.addedBytes)} added (${figures.grown.map((t) => `${t.name} ${size(t.bytes)}`).join(', ')})`,
  );
  return figures;
}

async function medianReference(backend: Backend, when: string): Promise<number> {
  const seconds: number[] = [];
  for (let i = 0; i < REFERENCE_TIMES; i++) seconds.push(await backend.reference());
  log(`reference ${when}: ${seconds.map((s) => `${s.toFixed(2)} s`).join(', ')}`);
  await withSession(backend.session, (s) => s.query(`DROP TABLE IF EXISTS ${REFERENCE_TABLE}`));
  return median(seconds);
}

async function history(
  backend: Backend,
  orders: number,
  transactions: number,
  workDir: string,
): Promise<HistoryFigures> {
  const steps = historyChanges(orders, RUNS - 1);
  // An order changed before run 2: its verdict has a history to read through.
  const queries = QUERIES(steps[0]!.orderIds[0]!);
  const serverVersion = await withSession(backend.session, async (s) => {
    // One read of both tables, so that the reference and run 1 start from the same cached state.
    await s.query(
      'SELECT (SELECT sum(amount_minor) FROM recon.orders), (SELECT sum(amount_minor) FROM recon.transactions)',
    );
    const rows = await s.query<{ version: string }>(`SELECT current_setting('server_version') AS version`);
    return rows[0]!.version;
  });
  const referenceBeforeRun1 = await medianReference(backend, 'on the data of run 1');
  const timings: Array<Map<string, number>> = [];
  const runs: RunFigures[] = [];
  for (let run = 1; run <= RUNS; run++) {
    if (run > 1) await applyChanges(backend, steps[run - 2]!, workDir);
    runs.push(await measuredRun(backend, run, asOfOfRun(run)));
    if (run === 1 || run === RUNS) {
      const ms = await withSession(backend.session, (s) => medianQueryMs(s, queries));
      log(`queries after run ${run}: ${[...ms].map(([name, t]) => `${name} ${t.toFixed(1)} ms`).join(', ')}`);
      timings.push(ms);
    }
  }
  // The same instant as run 10: nothing changed, not the data and not the clock.
  const unchangedRerun = await measuredRun(backend, RUNS + 1, asOfOfRun(RUNS));
  const referenceAtRerun = await medianReference(backend, 'on the data of the unchanged re-run');
  const inScope = new Set([...runs, unchangedRerun].map((r) => r.ordersInScope));
  if (inScope.size !== 1 || runs[0]!.ordersInScope < orders)
    throw new Error(`the runs judged different scopes: ${[...inScope].join(', ')} verdicts for ${orders} orders`);
  return {
    backend: backend.name,
    serverVersion,
    orders,
    transactions,
    runs,
    unchangedRerun,
    queries: queries.map((q) => ({
      name: q.name,
      sql: q.sql,
      afterRun1Ms: timings[0]!.get(q.name)!,
      afterRun10Ms: timings[1]!.get(q.name)!,
    })),
    oneOrderQuery: ONE_ORDER,
    referenceBeforeRun1,
    referenceAtRerun,
  };
}

async function main(): Promise<void> {
  const only = args.only;
  if (only !== undefined && only !== 'postgres' && only !== 'pglite')
    throw new Error(`--only must be postgres or pglite, got '${only}'`);
  const orders = positive('orders', args.orders);
  const pgliteOrders = positive('pglite-orders', args['pglite-orders']);
  const database = databaseName(args.database);
  const pgliteDir = args['pglite-dir'] === undefined ? undefined : path.resolve(args['pglite-dir']);
  if (pgliteDir !== undefined && existsSync(pgliteDir))
    throw new Error(`--pglite-dir ${pgliteDir} exists: name a directory for bench:history to create`);
  const adminUrl = process.env.DATABASE_URL;
  if (only !== 'pglite' && !adminUrl)
    throw new Error(
      'DATABASE_URL must point at a PostgreSQL server (e.g. postgres://root@127.0.0.1:5432/postgres), or pass --only pglite',
    );
  buildRecon(root, log);
  const results: HistoryFigures[] = [];
  const workDir = await mkdtemp(path.join(os.tmpdir(), 'recon-bench-history-'));
  try {
    if (only !== 'pglite') {
      const dir = path.join(workDir, 'postgres');
      await mkdir(dir);
      const { backend, transactions } = await postgresBackend(adminUrl!, database, orders);
      results.push(await history(backend, orders, transactions, dir));
      if (args.keep) log(`kept database ${database}`);
      else await backend.drop();
    }
    if (only !== 'postgres') {
      const dir = path.join(workDir, 'pglite');
      await mkdir(dir);
      const dataDir = pgliteDir ?? path.join(dir, 'data');
      const { backend, transactions } = await pgliteBackend(pgliteOrders, dir, dataDir);
      results.push(await history(backend, pgliteOrders, transactions, dir));
      if (args.keep) log(`kept the PGlite database in ${dataDir}`);
      else await backend.drop();
    }
  } finally {
    if (args.keep) log(`kept the generated files in ${workDir}`);
    else await rm(workDir, { recursive: true, force: true });
  }
  if (args.json) console.log(JSON.stringify({ phases: results.map(historyJson) }, null, 2));
  else console.log(results.map(historyTable).join('\n\n'));
}

try {
  await main();
} catch (error) {
  console.error(`bench: ${(error as Error).message}`);
  process.exitCode = 1;
}
