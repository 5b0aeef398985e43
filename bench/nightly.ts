/**
 * `npm run bench:nightly [-- --orders N] [-- --workers K] [-- --keep]`: one nightly run end to end, as production
 * runs it, against the same transactions loaded as one export file, measured in the same run.
 *
 * The sandbox of the payment service runs in this process, seeded with N orders (default 20,000). A fresh database
 * is migrated and given the scenario's orders (`recon import-orders`). Then one `recon serve` and K `recon worker`
 * processes (default 1) start on it, the built executable as users run it, and `recon nightly --wait` starts the run
 * of the day and waits for its end: the export requests to the sandbox, the deliveries it posts to serve's callback,
 * their ingest by whichever process takes the job, and the reconciliation. Where the time went is read afterwards
 * from the database's own timestamps (requests, deliveries, the queue's jobs, the reconciliation run).
 *
 * The reference is the floor of that work: the same transactions (the run's delivered files joined into one gzip
 * export) through `recon ingest`, then `recon reconcile --all`, into a second fresh database with the same orders.
 * It loads the same rows and judges the same orders by the same code, without the per-file cost of 200-order
 * batches: requests, callbacks, spooling, the queue, a transaction per file. The ratio says what the split costs.
 * (psql's \copy would be a floor of the load alone, and bench:ingest and bench:reconcile already hold recon's bulk
 * paths to it.)
 *
 * Needs DATABASE_URL (a PostgreSQL server where it may create and drop databases).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { gunzipSync, gzipSync } from 'node:zlib';
import pg from 'pg';
import { createSandbox, formatOrdersCsv, scenarioOrders } from '@recon/sandbox';
import { benchDatabases } from './bench-database.ts';
import { buildRecon } from './build-recon.ts';
import {
  breakdown,
  cpuSecondsOfStat,
  joinExportCsvs,
  spread,
  type Breakdown,
  type JobTimes,
  type Spread,
} from './nightly-figures.ts';
import { timed, type Measure } from './timed.ts';

const TARGET_ORDERS_PER_SECOND = 2000;
const DATABASE = 'recon_bench_nightly';
const REFERENCE_DATABASE = 'recon_bench_nightly_ref';
const IDENTIFIER = 'BENCHSHOP';
const SECRET = 'bench-nightly-secret';
const SEED = 1;
/** pg-boss's schema and queue names, as src/queue/job-queue.ts sets them. */
const QUEUE_TABLE = 'recon_queue.job';
const INGEST_QUEUE = 'recon-delivery-ingest';
const ADVANCE_QUEUE = 'recon-advance-nightly-run';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const cli = path.join(root, 'dist', 'cli', 'main.js');
const work = path.join(root, 'bench', '.work');
const log = (message: string) => process.stderr.write(`bench: ${message}\n`);
const count = (n: number) => n.toLocaleString('en');
const load = () =>
  loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');

const { values: args } = parseArgs({
  options: {
    orders: { type: 'string', default: '20000' },
    workers: { type: 'string', default: '1' },
    // Leaves both databases in place for a look at the run.
    keep: { type: 'boolean', default: false },
  },
});
const orders = Number(args.orders);
const workers = Number(args.workers);
const adminUrl = process.env.DATABASE_URL;
if (!Number.isSafeInteger(orders) || orders < 40) {
  console.error(
    `bench: --orders must be an integer of at least 40 (one order per scenario outcome), got '${args.orders}'`,
  );
  process.exit(1);
}
if (!Number.isSafeInteger(workers) || workers < 0) {
  console.error(`bench: --workers must be 0 or more, got '${args.workers}'`);
  process.exit(1);
}
if (!adminUrl) {
  console.error('bench: DATABASE_URL must point at a PostgreSQL server (e.g. postgres://root@127.0.0.1:5432/postgres)');
  process.exit(1);
}

async function phase<T>(name: string, job: () => Promise<T>): Promise<T> {
  log(`${name}...`);
  const started = performance.now();
  const result = await job();
  log(`${name}: ${((performance.now() - started) / 1000).toFixed(1)} s`);
  return result;
}

async function withClient<T>(url: string, job: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await job(client);
  } finally {
    await client.end();
  }
}

/** This process's environment without recon's settings, then `env`: every recon process gets exactly these. */
function reconEnv(env: Record<string, string>): NodeJS.ProcessEnv {
  const base = { ...process.env };
  for (const name of Object.keys(base)) if (name === 'DATABASE_URL' || name.startsWith('RECON_')) delete base[name];
  return { ...base, ...env };
}

async function recon(argv: string[], env: NodeJS.ProcessEnv): Promise<Measure> {
  const result = await timed(cli, argv, env);
  // 3: rows rejected (ingest, import-orders), still a load; the scenario's one bad row of each kind is on purpose.
  if (result.exitCode !== 0 && result.exitCode !== 3)
    throw new Error(`recon ${argv[0]} exited ${result.exitCode}: ${result.stderr.trim().slice(-500)}`);
  return result;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

interface Service {
  readonly name: string;
  readonly child: ChildProcess;
  /** The seconds of each 'delivery ingested' record it logged. */
  readonly ingestSeconds: number[];
  /** Deliveries it refused (busy, mostly), by the reason it logged. */
  readonly refused: Map<string, number>;
  readonly exited: Promise<number | null>;
}

/** A `recon serve` or `recon worker`, ready once it logs `ready` (its JSON log lines are read as they come). */
function startService(name: string, argv: string[], env: NodeJS.ProcessEnv, ready: RegExp): Promise<Service> {
  const child = spawn(cli, argv, { env, stdio: ['ignore', 'pipe', 'pipe'] });
  const ingestSeconds: number[] = [];
  const refused = new Map<string, number>();
  let stderr = '';
  let pending = '';
  const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    void exited.then((code) => reject(new Error(`${name} exited ${code} before it was ready: ${stderr.slice(-500)}`)));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr = (stderr + chunk).slice(-4000)));
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      const lines = (pending + chunk).split('\n');
      pending = lines.pop()!;
      for (const line of lines) {
        let record: { msg?: string; seconds?: number; level?: string; reason?: string };
        try {
          record = JSON.parse(line) as typeof record;
        } catch {
          continue;
        }
        if (record.msg && ready.test(record.msg)) resolve({ name, child, ingestSeconds, refused, exited });
        if (record.msg === 'delivery ingested' && typeof record.seconds === 'number')
          ingestSeconds.push(record.seconds);
        if (record.msg?.startsWith('delivery refused'))
          refused.set(record.reason!, (refused.get(record.reason!) ?? 0) + 1);
        if (record.level === 'error' || record.level === 'fatal') log(`${name}: ${line.slice(0, 300)}`);
      }
    });
  });
}

/** CPU seconds of a process so far; 0 once it is gone. */
function cpuSeconds(pid: number | undefined): number {
  try {
    return cpuSecondsOfStat(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return 0;
  }
}

interface CpuUse {
  readonly services: number;
  readonly sessions: number;
  /** This process: the sandbox, and the reading of the services' logs. */
  readonly sandbox: number;
}

/**
 * CPU seconds used so far by the recon processes and by the PostgreSQL sessions now open on the database (theirs,
 * pooled; a session that has ended is not counted, so this is read while the processes still run).
 */
async function cpuUse(url: string, services: readonly Service[]): Promise<CpuUse> {
  const sessions = await withClient(url, async (client) =>
    (
      await client.query<{ pid: number }>(
        'SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()',
      )
    ).rows.map((row) => row.pid),
  );
  return {
    services: services.reduce((sum, service) => sum + cpuSeconds(service.child.pid), 0),
    sessions: sessions.reduce((sum, pid) => sum + cpuSeconds(pid), 0),
    sandbox: cpuSeconds(process.pid),
  };
}

/** Transactions committed on the database so far (each statement outside a transaction is one). */
async function commits(url: string): Promise<number> {
  return withClient(url, async (client) => {
    const { rows } = await client.query<{ n: string }>(
      'SELECT xact_commit AS n FROM pg_stat_database WHERE datname = current_database()',
    );
    return Number(rows[0]!.n);
  });
}

async function stopService(service: Service): Promise<void> {
  service.child.kill('SIGTERM');
  const code = await service.exited;
  if (code !== 0) log(`${service.name} exited ${code}`);
}

interface RunFacts {
  readonly nightlyRunId: string;
  readonly state: string;
  readonly orders: number;
  readonly batches: number;
  readonly asOf: string;
  readonly transactions: number;
  readonly deliveredBytes: number;
  readonly requestsByState: Record<string, number>;
  readonly figures: Breakdown;
}

const ms = (value: Date | null) => (value === null ? null : value.getTime());

/** The run's own timestamps, and the queue's, read from the database once the run has ended. */
async function runFacts(url: string): Promise<RunFacts> {
  return withClient(url, async (client) => {
    const { rows: runs } = await client.query<{
      nightly_run_id: string;
      state: string;
      orders: number;
      batches: number;
      as_of: Date;
      started_at: Date;
      finished_at: Date;
      reconcile_started: Date;
      reconcile_finished: Date;
    }>(`SELECT n.nightly_run_id, n.state, n.orders, n.batches, n.as_of, n.started_at, n.finished_at,
              r.started_at AS reconcile_started, r.finished_at AS reconcile_finished
         FROM recon.nightly_runs n JOIN recon.reconciliation_runs r ON r.run_id = n.reconciliation_run_id`);
    if (runs.length !== 1) throw new Error(`expected one reconciled nightly run, found ${runs.length}`);
    const run = runs[0]!;
    const { rows: requests } = await client.query<{
      state: string;
      sent_at: Date | null;
      delivered_at: Date | null;
      ingested_at: Date | null;
    }>(`SELECT state, sent_at, delivered_at, ingested_at FROM recon.export_requests WHERE nightly_run_id = $1`, [
      run.nightly_run_id,
    ]);
    const jobs = async (queue: string): Promise<JobTimes[]> =>
      (
        await client.query<{ created_on: Date; started_on: Date | null; completed_on: Date | null }>(
          `SELECT created_on, started_on, completed_on FROM ${QUEUE_TABLE} WHERE name = $1`,
          [queue],
        )
      ).rows.map((job) => ({
        createdOn: job.created_on.getTime(),
        startedOn: ms(job.started_on),
        completedOn: ms(job.completed_on),
      }));
    const { rows: sizes } = await client.query<{ transactions: string; bytes: string }>(
      `SELECT (SELECT count(*) FROM recon.transactions) AS transactions,
              (SELECT coalesce(sum(bytes), 0) FROM recon.deliveries) AS bytes`,
    );
    const requestsByState: Record<string, number> = {};
    for (const r of requests) requestsByState[r.state] = (requestsByState[r.state] ?? 0) + 1;
    return {
      nightlyRunId: run.nightly_run_id,
      state: run.state,
      orders: run.orders,
      batches: run.batches,
      asOf: run.as_of.toISOString(),
      transactions: Number(sizes[0]!.transactions),
      deliveredBytes: Number(sizes[0]!.bytes),
      requestsByState,
      figures: breakdown(
        {
          startedAt: run.started_at.getTime(),
          finishedAt: run.finished_at.getTime(),
          reconcileStartedAt: run.reconcile_started.getTime(),
          reconcileFinishedAt: run.reconcile_finished.getTime(),
        },
        requests.map((r) => ({
          sentAt: ms(r.sent_at),
          deliveredAt: ms(r.delivered_at),
          ingestedAt: ms(r.ingested_at),
        })),
        await jobs(INGEST_QUEUE),
        await jobs(ADVANCE_QUEUE),
      ),
    };
  });
}

/** Every delivered gzip file of the run, decompressed and joined into one gzip export (the reference's input). */
async function oneExportFile(url: string, file: string): Promise<void> {
  const csvs = await withClient(url, async (client) => {
    const { rows } = await client.query<{ data: Buffer }>(
      `SELECT string_agg(c.data, ''::bytea ORDER BY c.seq) AS data
         FROM recon.deliveries d JOIN recon.delivery_chunks c USING (delivery_id)
        WHERE d.state = 'ingested' GROUP BY d.delivery_id ORDER BY d.delivery_id`,
    );
    return rows.map((row) => gunzipSync(row.data).toString('utf8'));
  });
  writeFileSync(file, gzipSync(joinExportCsvs(csvs)));
}

const fmt = (s: number) => s.toFixed(2);
const fmtSpread = (s: Spread) => (s.n === 0 ? '-' : `p50 ${fmt(s.p50)} s, p95 ${fmt(s.p95)} s, max ${fmt(s.max)} s`);

async function main(): Promise<number> {
  mkdirSync(work, { recursive: true });
  buildRecon(root, log);
  log(`machine load (1, 5, 15 min): ${load()}`);
  const databases = benchDatabases(adminUrl!, cli);
  const url = await phase(`creating and migrating database ${DATABASE}`, () => databases.fresh(DATABASE));

  const exportsFailed: string[] = [];
  const sandbox = await phase(`seeding the sandbox with ${count(orders)} orders`, async () =>
    createSandbox({
      identifier: IDENTIFIER,
      secret: SECRET,
      seed: SEED,
      seedOrders: orders,
      onEvent: (event) => {
        if (event.type === 'export-failed') exportsFailed.push(`${event.label}: ${String(event.error)}`);
      },
    }),
  );
  const services: Service[] = [];
  try {
    const sandboxUrl = await sandbox.listen(0, '127.0.0.1');
    const ordersFile = path.join(work, `nightly-orders-${orders}.csv`);
    writeFileSync(ordersFile, formatOrdersCsv(scenarioOrders(sandbox.store, sandbox.scenario!, sandbox.clock.now())));
    await phase("importing the merchant's orders (recon import-orders)", () =>
      recon(['import-orders', ordersFile], reconEnv({ DATABASE_URL: url })),
    );

    const port = await freePort();
    const env = reconEnv({
      DATABASE_URL: url,
      RECON_SERVICE_URL: sandboxUrl,
      RECON_IDENTIFIER: IDENTIFIER,
      RECON_SECRET: SECRET,
      RECON_PORT: String(port),
      RECON_CALLBACK_BASE_URL: `http://127.0.0.1:${port}/`,
      RECON_ADMIN_PORT: '0',
    });
    await phase(`starting recon serve and ${workers} recon worker(s)`, async () => {
      services.push(await startService('recon serve', ['serve'], env, /^listening on /));
      for (let k = 1; k <= workers; k++)
        services.push(await startService(`recon worker ${k}`, ['worker'], env, /^working$/));
    });

    log(`machine load before the run: ${load()}`);
    const cpuBefore = await cpuUse(url, services);
    const commitsBefore = await commits(url);
    const waited = await phase('the nightly run (recon nightly --wait)', () =>
      recon(['nightly', '--wait', '--json'], env),
    );
    const loadAfterRun = load();
    const cpuAfter = await cpuUse(url, services);
    const cpu = {
      services: cpuAfter.services - cpuBefore.services,
      // Sessions opened during the run started from nothing; those open before count from where they were.
      sessions: Math.max(0, cpuAfter.sessions - cpuBefore.sessions),
      sandbox: cpuAfter.sandbox - cpuBefore.sandbox,
    };
    const ingestLogged = spread(services.flatMap((service) => service.ingestSeconds));
    const refusals = [...services[0]!.refused].map(([reason, n]) => `${n} ${reason}`).join(', ') || 'none';
    await phase('stopping the processes', async () => {
      for (const service of services.splice(0).reverse()) await stopService(service);
    });
    // Sessions report their counts as they end: read once every process has stopped.
    const commitsInRun = (await commits(url)) - commitsBefore;
    const facts = await runFacts(url);
    if (facts.state !== 'reconciled') throw new Error(`the nightly run ended ${facts.state}`);

    const exportFile = path.join(work, `nightly-${orders}.csv.gz`);
    await phase('joining the delivered files into one export', () => oneExportFile(url, exportFile));
    const refUrl = await phase(`reference: creating database ${REFERENCE_DATABASE} with the same orders`, async () => {
      const fresh = await databases.fresh(REFERENCE_DATABASE);
      await recon(['import-orders', ordersFile], reconEnv({ DATABASE_URL: fresh }));
      await withClient(fresh, (client) => client.query('CHECKPOINT'));
      return fresh;
    });
    const refEnv = reconEnv({ DATABASE_URL: refUrl });
    const ingest = await phase('reference: recon ingest of the one file', () => recon(['ingest', exportFile], refEnv));
    const reconcile = await phase('reference: recon reconcile --all', () =>
      recon(['reconcile', '--all', '--as-of', facts.asOf, '--json'], refEnv),
    );
    if (!args.keep) {
      await databases.drop(DATABASE);
      await databases.drop(REFERENCE_DATABASE);
    } else log(`kept databases ${DATABASE} and ${REFERENCE_DATABASE}`);

    const f = facts.figures;
    const perSecond = facts.orders / f.totalSeconds;
    const refSeconds = ingest.seconds + reconcile.seconds;
    const lines = [
      `nightly benchmark: node ${process.version}, ${count(facts.orders)} orders in ${count(facts.batches)} batches, ` +
        `${count(facts.transactions)} transactions, ${(facts.deliveredBytes / 1e6).toFixed(1)} MB delivered; ` +
        `1 recon serve + ${workers} recon worker(s); load ${load()} (after the run: ${loadAfterRun})`,
      `requests: ${Object.entries(facts.requestsByState)
        .map(([state, n]) => `${n} ${state}`)
        .join(
          ', ',
        )}; deliveries refused by recon serve: ${refusals}; exports the sandbox gave up: ${exportsFailed.length}`,
      ...exportsFailed.slice(0, 3).map((failure) => `  ${failure}`),
      '',
      '                        seconds  orders/s   target  status',
      `nightly run, end to end ${fmt(f.totalSeconds).padStart(7)} ${Math.round(perSecond).toString().padStart(9)} ` +
        `${`>=${TARGET_ORDERS_PER_SECOND}`.padStart(8)}  ${perSecond >= TARGET_ORDERS_PER_SECOND ? 'ok' : 'MISSED'}`,
      `reference: one file     ${fmt(refSeconds).padStart(7)} ${Math.round(facts.orders / refSeconds)
        .toString()
        .padStart(9)}` + `           (ingest ${fmt(ingest.seconds)} s + reconcile ${fmt(reconcile.seconds)} s)`,
      `ratio run / reference   ${(f.totalSeconds / refSeconds).toFixed(2).padStart(7)}`,
      `CPU of the run: recon serve and workers ${fmt(cpu.services)} s, their PostgreSQL sessions ${fmt(cpu.sessions)} s; ` +
        `${fmt(((cpu.services + cpu.sessions) * 1000) / facts.orders)} s per 1,000 orders; ` +
        `${(commitsInRun / facts.batches).toFixed(1)} transactions committed per batch`,
      `CPU of the sandbox (the service, in this process) during the run: ${fmt(cpu.sandbox)} s`,
      `(recon nightly --wait took ${fmt(waited.seconds)} s of wall time, its start and 0.5 s polls included)`,
      '',
      'where the time goes (seconds from the run start, or per item):',
      `  requests sent by        ${fmt(f.requestsSentBy)}`,
      `  deliveries received     first ${fmt(f.firstDeliveryAt)}, last ${fmt(f.lastDeliveryAt)}`,
      `  last export ingested    ${fmt(f.lastIngestAt)}`,
      `  ingest job per file     ${fmtSpread(f.ingestJob)}`,
      `  ingest per file (log)   ${fmtSpread(ingestLogged)}  (spool from the database and load)`,
      `  queue wait per file     ${fmtSpread(f.queueWait)}`,
      `  advance jobs            ${f.advanceJob.n}, ${fmt(f.advanceJob.totalSeconds)} s in all, ${fmtSpread(f.advanceJob)}`,
      `  last ingest -> reconcile ${fmt(f.lastIngestToReconcile)}`,
      `  reconciliation          ${fmt(f.reconcileSeconds)}`,
      `  total                   ${fmt(f.totalSeconds)}`,
    ];
    console.log(lines.join('\n'));
    return 0;
  } finally {
    for (const service of services.reverse()) await stopService(service).catch(() => {});
    await sandbox.close();
  }
}

try {
  process.exitCode = await main();
} catch (error) {
  console.error(`bench: ${(error as Error).message}`);
  process.exitCode = 1;
}
