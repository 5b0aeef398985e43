/**
 * `npm run bench:reconcile [-- --orders N] [-- --reference-only] [-- --keep]`: `recon reconcile --all` against the
 * plain-SQL reference of reconcile-reference-sql.ts, measured in the same run on the same database.
 *
 * A fresh database is migrated and filled by COPY with N orders (default 1,000,000) and about 2 transactions each
 * (bench/reconcile-scenarios.ts), then VACUUM ANALYZE and one read of both tables, so that both sides start from
 * the same settled, cached state. Then, three times in turn, the reference (`psql -c` with one CREATE TABLE ... AS
 * SELECT, bench/reconcile-reference-sql.ts) and `recon reconcile --all --as-of <the generator's instant> --json`,
 * each after a CHECKPOINT, recon each time into verdict tables emptied so that every run is the same first run; the
 * median of each side is kept. Both under /usr/bin/time: wall seconds, and recon's peak RSS (the highest of its
 * runs). Then checks that the last run's verdicts add up and compares its settled amounts with the reference's.
 * Needs DATABASE_URL (a PostgreSQL server where it may create and drop databases) and psql.
 */
import path from 'node:path';
import { parseArgs } from 'node:util';
import { fileURLToPath } from 'node:url';
import { benchDatabases } from './bench-database.ts';
import { buildRecon } from './build-recon.ts';
import { loadReconcileData, withClient } from './load-reconcile-data.ts';
import { REFERENCE_RECONCILE, REFERENCE_TABLE } from './reconcile-reference-sql.ts';
import { AS_OF } from './reconcile-scenarios.ts';
import { timed, type Measure } from './timed.ts';

const TARGET_RATIO = 2.5;
const TARGET_RSS_MB = 256;
const DATABASE = 'recon_bench_reconcile';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const cli = path.join(root, 'dist', 'cli', 'main.js');
const log = (message: string) => process.stderr.write(`bench: ${message}\n`);
const count = (n: number) => n.toLocaleString('en');

const { values: args } = parseArgs({
  options: {
    orders: { type: 'string', default: '1000000' },
    // Measures the generator and the reference alone, without building or running recon.
    'reference-only': { type: 'boolean', default: false },
    // Leaves the database in place for a look at the verdicts.
    keep: { type: 'boolean', default: false },
  },
});
const orders = Number(args.orders);
const adminUrl = process.env.DATABASE_URL;
if (!Number.isSafeInteger(orders) || orders < 1) {
  console.error(`bench: --orders must be a positive integer, got '${args.orders}'`);
  process.exit(1);
}
if (!adminUrl) {
  console.error('bench: DATABASE_URL must point at a PostgreSQL server (e.g. postgres://root@127.0.0.1:5432/postgres)');
  process.exit(1);
}

/** Seconds of one phase, for the progress lines. */
async function phase<T>(name: string, work: () => Promise<T>): Promise<T> {
  log(`${name}...`);
  const started = performance.now();
  const result = await work();
  log(`${name}: ${((performance.now() - started) / 1000).toFixed(1)} s`);
  return result;
}

/**
 * A run of a few seconds varies by a fifth, and more while other work shares the machine: each side is run three
 * times, taking turns so that both meet the same spells of load, and the medians are compared.
 */
const RUNS = 3;

const median = (runs: readonly Measure[]): Measure =>
  [...runs].sort((a, b) => a.seconds - b.seconds)[Math.floor(runs.length / 2)]!;

/**
 * Writes out what the load or the other side left dirty, so that neither side pays for it: the load's WAL starts
 * checkpoints that were otherwise still writing, spread over several seconds, while the first side ran.
 */
async function checkpoint(url: string): Promise<void> {
  await withClient(url, (client) => client.query('CHECKPOINT'));
}

async function reference(url: string): Promise<Measure> {
  await withClient(url, (client) => client.query(`DROP TABLE IF EXISTS ${REFERENCE_TABLE}`));
  await checkpoint(url);
  const result = await timed('psql', ['-qX', '-v', 'ON_ERROR_STOP=1', url, '-c', REFERENCE_RECONCILE]);
  if (result.exitCode !== 0) throw new Error(`reference failed: ${result.stderr.trim()}`);
  return result;
}

async function recon(url: string): Promise<Measure> {
  // Every run starts from no verdicts, as the first did: a later run would also compare with the earlier ones.
  await withClient(url, (client) =>
    client.query(
      'TRUNCATE recon.verdicts, recon.verdict_history, recon.run_totals, recon.run_status_totals, recon.run_account_totals, recon.run_account_parts, recon.run_verdict_changes, recon.run_currency_moves, recon.run_scope_orders, recon.reconciliation_runs',
    ),
  );
  await checkpoint(url);
  // Run as the executable, as users do, so the shebang's V8 flags apply.
  const result = await timed(cli, ['reconcile', '--all', '--as-of', AS_OF, '--json'], {
    ...process.env,
    DATABASE_URL: url,
  });
  if (result.exitCode === 1 || result.exitCode === 2)
    throw new Error(`recon reconcile exited ${result.exitCode}: ${result.stderr.trim().slice(-500)}`);
  return result;
}

/** The reference and recon in turn, RUNS times each (recon skipped with --reference-only). */
async function measure(url: string, referenceOnly: boolean): Promise<{ ref: Measure; ours: Measure | null }> {
  const refs: Measure[] = [];
  const ours: Measure[] = [];
  for (let i = 0; i < RUNS; i++) {
    refs.push(await reference(url));
    if (!referenceOnly) ours.push(await recon(url));
  }
  const seconds = (runs: readonly Measure[]) => runs.map((r) => `${r.seconds.toFixed(2)} s`).join(', ');
  log(`reference runs: ${seconds(refs)}`);
  if (referenceOnly) return { ref: median(refs), ours: null };
  log(`recon runs: ${seconds(ours)}; peak RSS ${ours.map((r) => `${r.peakRssMb.toFixed(0)} MB`).join(', ')}`);
  const peakRssMb = Math.max(...ours.map((r) => r.peakRssMb));
  return { ref: median(refs), ours: { ...median(ours), peakRssMb } };
}

interface Tally {
  serverVersion: string;
  referenceRows: number;
  referenceAsExpected: number;
  /** ORDERIDs with a succeeded transaction and no order: what `--all` must add to the orders. */
  unknownOrderIds: number;
}

async function tally(url: string): Promise<Tally> {
  return withClient(url, async (client) => {
    const { rows } = await client.query<Record<keyof Tally, string>>(`
      SELECT current_setting('server_version') AS "serverVersion",
             (SELECT count(*) FROM ${REFERENCE_TABLE}) AS "referenceRows",
             (SELECT count(*) FROM ${REFERENCE_TABLE} WHERE settled_as_expected) AS "referenceAsExpected",
             (SELECT count(DISTINCT t.order_id) FROM recon.transactions t
               WHERE t.exec_code = '0000' AND NOT EXISTS (SELECT 1 FROM recon.orders o WHERE o.order_id = t.order_id)) AS "unknownOrderIds"`);
    const row = rows[0]!;
    return {
      serverVersion: row.serverVersion,
      referenceRows: Number(row.referenceRows),
      referenceAsExpected: Number(row.referenceAsExpected),
      unknownOrderIds: Number(row.unknownOrderIds),
    };
  });
}

interface Verdicts {
  known: number;
  unknown: number;
  byStatus: Array<{ status: string; n: number }>;
  settledAgrees: number;
  settledDisagrees: Array<{ status: string; n: number }>;
}

/** The verdicts of recon's run, read from the tables rather than its output, and compared with the reference. */
async function verdicts(url: string): Promise<Verdicts> {
  return withClient(url, async (client) => {
    const run = `(SELECT max(run_id) FROM recon.reconciliation_runs)`;
    const totals = await client.query<{ known: string; unknown: string }>(
      `SELECT count(*) FILTER (WHERE known_order) AS known, count(*) FILTER (WHERE NOT known_order) AS unknown
       FROM recon.verdicts WHERE run_id = ${run}`,
    );
    const byStatus = await client.query<{ status: string; n: string }>(
      `SELECT status, count(*) AS n FROM recon.verdicts WHERE run_id = ${run} GROUP BY status ORDER BY count(*) DESC, status`,
    );
    const settled = await client.query<{ status: string; agrees: boolean; n: string }>(
      `SELECT v.status, v.settled_minor = r.settled AS agrees, count(*) AS n
       FROM ${REFERENCE_TABLE} r JOIN recon.verdicts v ON v.order_id = r.order_id AND v.run_id = ${run}
       GROUP BY 1, 2 ORDER BY count(*) DESC`,
    );
    return {
      known: Number(totals.rows[0]!.known),
      unknown: Number(totals.rows[0]!.unknown),
      byStatus: byStatus.rows.map((r) => ({ status: r.status, n: Number(r.n) })),
      settledAgrees: settled.rows.filter((r) => r.agrees).reduce((sum, r) => sum + Number(r.n), 0),
      settledDisagrees: settled.rows.filter((r) => !r.agrees).map((r) => ({ status: r.status, n: Number(r.n) })),
    };
  });
}

async function main(): Promise<number> {
  const referenceOnly = args['reference-only'];
  if (!referenceOnly) {
    // --reference-only measures the rest without recon, should the build fail.
    buildRecon(root, log);
  }
  const databases = benchDatabases(adminUrl!, cli);
  const url = await phase(`creating and migrating database ${DATABASE}`, () => databases.fresh(DATABASE));
  const loaded = await phase(
    `loading ${count(orders)} orders and their transactions by COPY, then VACUUM ANALYZE`,
    () => loadReconcileData(url, orders),
  );
  log(
    `loaded ${count(loaded.orders)} orders, ${count(loaded.transactions)} transactions; scenarios: ${JSON.stringify(loaded.kinds)}`,
  );
  await phase('reading both tables once (cache warm-up)', () =>
    withClient(url, (client) =>
      client.query(
        'SELECT (SELECT sum(amount_minor) FROM recon.orders), (SELECT sum(amount_minor) FROM recon.transactions)',
      ),
    ),
  );
  const { ref, ours } = await phase(
    referenceOnly
      ? `reference: one CREATE TABLE ... AS SELECT through psql, ${RUNS} times`
      : `reference and recon reconcile --all in turn, ${RUNS} times each`,
    () => measure(url, referenceOnly),
  );
  const facts = await tally(url);
  const outcome = ours ? await verdicts(url) : null;
  if (args.keep) log(`kept database ${DATABASE}`);
  else await databases.drop(DATABASE);

  const lines = [
    `reconcile benchmark: node ${process.version}, PostgreSQL ${facts.serverVersion}, as of ${AS_OF}`,
    '   orders  transactions   ref s  recon s  ratio  target  recon peak RSS  status',
  ];
  const ratio = ours ? ours.seconds / ref.seconds : null;
  const ok = ours && ratio !== null && ratio <= TARGET_RATIO && ours.peakRssMb < TARGET_RSS_MB;
  lines.push(
    [
      count(loaded.orders).padStart(9),
      count(loaded.transactions).padStart(13),
      ref.seconds.toFixed(2).padStart(7),
      (ours ? ours.seconds.toFixed(2) : '-').padStart(8),
      (ratio !== null ? ratio.toFixed(2) : '-').padStart(6),
      `<=${TARGET_RATIO}`.padStart(7),
      (ours ? `${ours.peakRssMb.toFixed(0)} MB` : '-').padStart(15),
      ours ? (ok ? ' ok' : ' MISSED') : ' recon not run (--reference-only)',
    ].join(' '),
  );
  lines.push(
    `reference: ${count(facts.referenceRows)} rows, ${count(facts.referenceAsExpected)} with settled = expected`,
  );
  let sane = facts.referenceRows === loaded.orders;
  if (outcome) {
    const total = outcome.known + outcome.unknown;
    const adds = total === loaded.orders + facts.unknownOrderIds && outcome.known === loaded.orders;
    sane &&= adds;
    lines.push(
      `verdicts: ${count(total)} = ${count(outcome.known)} orders + ${count(outcome.unknown)} unknown ORDERIDs; ` +
        `expected ${count(loaded.orders)} + ${count(facts.unknownOrderIds)}: ${adds ? 'ok' : 'MISMATCH'}`,
    );
    lines.push(`statuses: ${outcome.byStatus.map((s) => `${s.status} ${count(s.n)}`).join(', ')}`);
    lines.push(
      `settled: recon agrees with the reference for ${count(outcome.settledAgrees)} of ${count(loaded.orders)} orders` +
        (outcome.settledDisagrees.length
          ? `; differs for ${outcome.settledDisagrees.map((s) => `${s.status} ${count(s.n)}`).join(', ')}`
          : ''),
    );
    lines.push(`recon: ${ours!.stdout.trim().replace(/\s*\n\s*/g, ' ')}`);
  }
  console.log(lines.join('\n'));
  return sane ? 0 : 1;
}

try {
  process.exitCode = await main();
} catch (error) {
  console.error(`bench: ${(error as Error).message}`);
  process.exitCode = 1;
}
