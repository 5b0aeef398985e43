import { randomBytes } from 'node:crypto';
import { cp, mkdir, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { sql } from 'kysely';
import {
  createSandbox,
  createSandboxClock,
  createSeededRandom,
  instalmentAndWalletAccounts,
  type Sandbox,
  type SandboxAccount,
  type SeededRandom,
} from '@recon/sandbox';
import { createPaymentClient } from '../src/client/payment-client.ts';
import type { ExportAccount } from '../src/client/export-accounts.ts';
import { loadConfig, type Config } from '../src/config/config.ts';
import type { Database } from '../src/db/database.ts';
import { migrate } from '../src/db/migrate.ts';
import { openDatabase } from '../src/db/open-database.ts';
import { createLogger } from '../src/log/create-logger.ts';
import type { LogLevel } from '../src/log/logger.ts';
import { createMetricsRegistry } from '../src/metrics/metrics-registry.ts';
import { syncAccounts } from '../src/reconcile/sync-accounts.ts';
import type { PgBoss } from 'pg-boss';
import { openJobQueue, QUEUES } from '../src/queue/job-queue.ts';
import { startNightlyWorker, type RunningWorker } from '../pipelines/nightly/nightly-worker.ts';
import { startTcpProxy, type TcpProxy } from '../test/support/tcp-proxy.ts';
import { startReconServices, type ReconServices } from '../pipelines/nightly/recon-services.ts';
import { createBooks, type Books } from './books.ts';
import { startNetwork, type DeliveryFate, type DeliveryKey, type Network } from './network.ts';
import { forgeExport } from './forgery.ts';
import { createService, type Service } from './service.ts';

/** How often each fault strikes a delivery, this night: what is left passes. */
export interface NetworkFaults {
  readonly drop: number;
  readonly duplicate: number;
  readonly hold: number;
  readonly abort: number;
}

export const NO_FAULTS: NetworkFaults = { drop: 0, duplicate: 0, hold: 0, abort: 0 };

export interface StoppableWorker {
  /** Has this worker look for a job of `queue` now. */
  wake(queue: string): void;
  stop(): Promise<void>;
  start(): Promise<void>;
}

/** What the steps tell the network, and what it did. */
export interface NetworkState {
  /** This night's faults. */
  faults: NetworkFaults;
  /**
   * The nightly run (by date) whose first export (batch 1, first request, first account) gets a stranger's rows
   * appended on its way; none when null.
   */
  forgeRunDate: string | null;
  /** The transactions a forged delivery tried to rewrite. */
  readonly forgedVictims: string[];
  /**
   * The nightly run (by date) whose first export is held back while the service changes one of its orders, and
   * delivered after the run (a newer export of the same orders ingested meanwhile); none when null.
   */
  lateRunDate: string | null;
  /** What the service does while that export is held: the export's orders, and the accounts it covers. */
  onLate: (orderIds: readonly string[], identifiers: readonly string[]) => string;
  /** What it did. */
  readonly lateChanges: string[];
}

/**
 * Everything one seed's simulation runs on, all real and in this process: recon's database (PGlite in a folder of
 * its own, or a new PostgreSQL database when DATABASE_URL is set), its receiver and job queue, a worker, the sandbox
 * of the payment service with two accounts (one per payment method), the network between them, and the merchant's
 * books. Time is the sandbox's clock, which moves only when the simulation moves it; recon's own waits (export
 * time-outs, polling) are real and short.
 */
export interface World {
  readonly seed: number;
  readonly random: SeededRandom;
  readonly database: Database;
  /** The PostgreSQL database's URL; undefined on PGlite. */
  readonly databaseUrl: string | undefined;
  readonly config: Config;
  readonly sandbox: Sandbox;
  readonly service: Service;
  readonly accounts: readonly SandboxAccount[];
  /** Whether recon asks both accounts as one group (SCOPE=CLIENTSGROUP) or each alone (SCOPE=CLIENT). */
  readonly grouped: boolean;
  /** Each account with the client that signs as it: what a nightly run and a backfill ask. */
  readonly exportAccounts: readonly ExportAccount[];
  readonly books: Books;
  readonly network: Network;
  readonly services: ReconServices;
  /** The worker of this process, on a job queue of its own: stopped and started again like a worker process. */
  readonly worker: StoppableWorker;
  /** PostgreSQL only: the connections of this process to the server go through a proxy the simulation can cut. */
  readonly connections: TcpProxy | undefined;
  /** PostgreSQL only: the settings of a `recon worker` of its own process, the same recon as this one. */
  readonly workerProcessEnv: NodeJS.ProcessEnv | undefined;
  readonly networkState: NetworkState;
  /** The process's own temp folder, where recon spools: empty whenever nothing is under way. */
  readonly tempDir: string;
  close(): Promise<void>;
}

export interface WorldOptions {
  readonly seed: number;
  /** A PostgreSQL server to create the simulation's database on; PGlite when absent. */
  readonly databaseUrl?: string | undefined;
  /** The first night's instant; the simulation's clock starts there. */
  readonly start: Date;
  /**
   * A migrated database to start from as a copy rather than migrating an empty one (seconds on PGlite): on PostgreSQL
   * a database to CREATE DATABASE ... TEMPLATE from, on PGlite a closed RECON_DATA_DIR. The tests' run has one.
   */
  readonly template?: { readonly postgres: string | null; readonly pglite: string } | undefined;
}

export async function createWorld(options: WorldOptions): Promise<World> {
  const { seed } = options;
  const random = createSeededRandom(seed);
  const root = await mkdtemp(path.join(os.tmpdir(), `recon-simulation-${seed}-`));
  const tempDir = path.join(root, 'tmp');
  await mkdir(tempDir);
  const closing: (() => Promise<unknown>)[] = [() => rm(root, { recursive: true, force: true })];
  const close = async () => {
    for (const step of closing.splice(0).reverse()) await step().catch(() => {});
  };
  try {
    const databaseUrl = options.databaseUrl
      ? await createPostgresDatabase(options.databaseUrl, seed, closing, options.template?.postgres ?? null)
      : undefined;
    if (!databaseUrl && options.template)
      await cp(options.template.pglite, path.join(root, 'recon'), { recursive: true });
    // On PostgreSQL this process reaches the server through a proxy whose connections a step can cut.
    const connections = databaseUrl
      ? await startTcpProxy({ host: new URL(databaseUrl).hostname, port: Number(new URL(databaseUrl).port || 5432) })
      : undefined;
    if (connections) closing.push(() => connections.close());
    const database = await openDatabase({
      databaseUrl: connections && databaseUrl ? connections.through(databaseUrl) : undefined,
      dataDir: path.join(root, 'recon'),
    });
    closing.push(() => database.close());
    await migrate(database);

    const config = loadConfig({
      RECON_DATA_DIR: path.join(root, 'recon'),
      // Every night asks for every order of the month: a notification, stamped when recon received it (now, while
      // the simulation's nights run ahead of the wall clock), stays within the window of every night.
      RECON_LOOKBACK_DAYS: '60',
      RECON_EXPORT_BATCH_SIZE: String(random.pick([7, 20, 50])),
      RECON_EXPORT_COMPRESSION: 'gzip',
      // Lost exports are asked for again after a second of real time, three requests at most.
      RECON_EXPORT_TIMEOUT_SECONDS: '1',
      RECON_EXPORT_ATTEMPTS: '3',
      // A worker killed in the middle of a job: its job goes to another once its heartbeat lapses (the least allowed).
      RECON_JOB_HEARTBEAT_SECONDS: '10',
      RECON_EXPORT_IN_FLIGHT: String(random.pick([2, 8])),
    });
    const accounts = instalmentAndWalletAccounts({ instalment: `instalment-${seed}`, wallet: `wallet-${seed}` });
    // The service takes either method on either account: a payment on the account of the other method is possible
    // (and recon warns of it), as it is when a shop's checkout is misconfigured.
    const serviceAccounts = accounts.map(({ paymentMethods: _, ...account }) => account);
    const grouped = random.chance(0.5);
    await syncAccounts(
      database.db,
      accounts.map((account) => ({
        identifier: account.identifier,
        group: grouped ? account.group : undefined,
        paymentMethods: account.paymentMethods,
      })),
    );

    const clock = createSandboxClock({ start: options.start, ticking: false });
    const networkState: NetworkState = {
      faults: NO_FAULTS,
      forgeRunDate: null,
      forgedVictims: [],
      lateRunDate: null,
      onLate: () => '',
      lateChanges: [],
    };
    // The worker is started below, once the sandbox it asks is up; no delivery arrives before a night asks for one.
    let wakeIngest = () => {};
    const services = await startReconServices({
      database,
      heartbeatSeconds: config.queue.heartbeatSeconds,
      onIngestQueued: () => wakeIngest(),
      receiver: {
        host: '127.0.0.1',
        port: 0,
        accounts: accounts.map(({ identifier, secret }) => ({ identifier, secret })),
        maxFileBytes: config.limits.maxFileBytes,
        metrics: createMetricsRegistry(),
      },
    });
    closing.push(() => services.close({ graceful: false }));
    const sandbox = createSandbox({
      accounts: serviceAccounts,
      clock,
      notifyUrl: `${services.receiver!.url}/notify`,
      callbackFormat: 'raw',
      notificationRetry: { attempts: 3, baseDelayMs: 20, maxDelayMs: 100 },
      exportRetry: { attempts: 4, baseDelayMs: 20, maxDelayMs: 100 },
    });
    closing.push(() => sandbox.close());
    const service = createService(sandbox);
    const network = await startNetwork(
      services.receiver!.url,
      (key) => deliveryFate(database, seed, accounts[0].identifier, networkState, key),
      (token, body) => forgeDelivery(database, service, networkState, token, body),
      async (token) => {
        const request = await retried(() =>
          database.db
            .selectFrom('recon.export_requests')
            .select(['order_ids', 'identifier', 'scope'])
            .where('token', '=', token)
            .executeTakeFirstOrThrow(),
        );
        const identifiers =
          request.scope === 'CLIENTSGROUP' ? accounts.map((account) => account.identifier) : [request.identifier ?? ''];
        networkState.lateChanges.push(networkState.onLate(request.order_ids, identifiers));
      },
    );
    closing.push(() => network.close());
    const sandboxUrl = await sandbox.listen(0, '127.0.0.1');
    const exportAccounts: ExportAccount[] = accounts.map(({ identifier, secret, group }) => ({
      identifier,
      group: grouped ? group : undefined,
      client: createPaymentClient({
        baseUrl: sandboxUrl,
        identifier,
        secret,
        timeoutMs: 10_000,
        retry: { attempts: 3, baseDelayMs: 20 },
      }),
    }));
    // SIM_LOG=debug (or info...) writes the worker's JSON log to stderr, to see a night's run from the inside.
    const logLevel = process.env['SIM_LOG'];
    const worker = stoppableWorker(database, config, {
      ...(logLevel
        ? { log: createLogger({ level: logLevel as LogLevel, stream: process.stderr, name: 'simulation' }) }
        : {}),
      accounts: exportAccounts,
      callbackBaseUrl: network.url,
      nightly: config.nightly,
      reconcile: config.reconcile,
      ingest: { timezone: 'UTC', limits: config.limits },
      pollingIntervalSeconds: 0.5,
    });
    await worker.start();
    closing.push(() => worker.stop());
    // On a queue instance of its own, this worker would find each delivery only at its next poll, up to half a second.
    wakeIngest = () => worker.wake(QUEUES.ingestDelivery);
    const workerProcessEnv = databaseUrl
      ? {
          ...process.env,
          DATABASE_URL: withApplicationName(databaseUrl, 'simulation-worker'),
          RECON_DATA_DIR: path.join(root, 'recon'),
          RECON_ACCOUNTS: JSON.stringify(
            accounts.map((account) => ({
              identifier: account.identifier,
              secret: account.secret,
              ...(grouped ? { group: account.group } : {}),
              payment_methods: account.paymentMethods,
            })),
          ),
          RECON_SERVICE_URL: sandboxUrl,
          RECON_CALLBACK_BASE_URL: network.url,
          RECON_LOOKBACK_DAYS: String(config.nightly.lookbackDays),
          RECON_EXPORT_BATCH_SIZE: String(config.nightly.exportBatchSize),
          RECON_EXPORT_COMPRESSION: config.nightly.exportCompression,
          RECON_EXPORT_TIMEOUT_SECONDS: String(config.nightly.exportTimeoutSeconds),
          RECON_EXPORT_ATTEMPTS: String(config.nightly.exportAttempts),
          RECON_EXPORT_IN_FLIGHT: String(config.nightly.exportInFlight),
          RECON_JOB_HEARTBEAT_SECONDS: '10',
          // The night's jobs come from this process: the worker process finds them by polling, as often as this one's.
          RECON_JOB_POLL_MS: '500',
          RECON_ADMIN_PORT: '0',
          RECON_LOG_LEVEL: 'error',
          TMPDIR: tempDir,
        }
      : undefined;
    return {
      seed,
      random,
      database,
      databaseUrl,
      config,
      sandbox,
      service,
      accounts,
      grouped,
      exportAccounts,
      books: createBooks(root, config.limits),
      network,
      services,
      worker,
      connections,
      workerProcessEnv,
      networkState,
      tempDir,
      close,
    };
  } catch (error) {
    await close();
    throw error;
  }
}

/**
 * A delivery's fate, from the seed and what the delivery is (its run's date, batch, attempt and account, and the
 * service's try), never from when it arrives: two runs of a seed lose and delay the same exports.
 */
async function deliveryFate(
  database: Database,
  seed: number,
  firstIdentifier: string,
  state: NetworkState,
  key: DeliveryKey,
): Promise<DeliveryFate> {
  // Read again while this process's connections are cut (a step of the night): the network goes on meanwhile.
  const request = await retried(() =>
    database.db
      .selectFrom('recon.export_requests as r')
      .leftJoin('recon.nightly_runs as n', 'n.nightly_run_id', 'r.nightly_run_id')
      .select(['r.batch', 'r.attempt', 'r.identifier', sql<string | null>`n.run_date::text`.as('run_date')])
      .where('r.token', '=', key.token)
      .executeTakeFirst(),
  );
  if (!request) return 'pass';
  const identity = `${request.run_date}/${request.batch}/${request.attempt}/${request.identifier}`;
  const first =
    request.batch === 1 && request.attempt === 1 && request.identifier === firstIdentifier && key.attempt === 1;
  if (first && request.run_date === state.forgeRunDate) return 'forge';
  if (first && request.run_date === state.lateRunDate) return 'late';
  const draw = createSeededRandom(hash(`${seed}:${identity}:${key.attempt}`)).next();
  const { drop, duplicate, hold, abort } = state.faults;
  // The service's later tries of a delivery it saw fail go through: the fault is the first try's.
  if (key.attempt > 1) return 'pass';
  if (draw < drop) return 'drop';
  if (draw < drop + duplicate) return 'duplicate';
  if (draw < drop + duplicate + hold) return 'hold';
  if (draw < drop + duplicate + hold + abort) return 'abort';
  return 'pass';
}

async function forgeDelivery(
  database: Database,
  service: Service,
  state: NetworkState,
  token: string,
  body: Buffer,
): Promise<Buffer> {
  const request = await retried(() =>
    database.db
      .selectFrom('recon.export_requests')
      .select(['identifier', 'scope', 'order_ids'])
      .where('token', '=', token)
      .executeTakeFirstOrThrow(),
  );
  const forged = forgeExport(
    body,
    { identifier: request.identifier ?? '', scope: request.scope ?? 'CLIENT', orderIds: request.order_ids },
    service.transactions(),
  );
  if (forged.victim) state.forgedVictims.push(forged.victim);
  return forged.body;
}

/**
 * The worker of the simulation's own process, on a job queue instance of its own, so that it can be stopped (its jobs
 * left to others) and started again like a process of its own.
 */
function stoppableWorker(
  database: Database,
  config: Config,
  options: Parameters<typeof startNightlyWorker>[2],
): StoppableWorker {
  let running: { boss: PgBoss; worker: RunningWorker } | undefined;
  return {
    wake: (queue) => running?.worker.wake(queue),
    async start() {
      const boss = await openJobQueue(database, { heartbeatSeconds: config.queue.heartbeatSeconds, onError: () => {} });
      running = { boss, worker: await startNightlyWorker(boss, database, options) };
    },
    async stop() {
      const stopping = running;
      running = undefined;
      if (!stopping) return;
      await stopping.worker.stop();
      await stopping.boss.stop({ graceful: true, close: false, timeout: 30_000 });
    },
  };
}

function withApplicationName(url: string, name: string): string {
  const withName = new URL(url);
  withName.searchParams.set('application_name', name);
  return withName.toString();
}

/** `read`, tried again for a few seconds while it fails (a connection cut for a moment). */
async function retried<T>(read: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await read();
    } catch (error) {
      if (attempt >= 100) throw error;
      await sleep(50);
    }
  }
}

/** FNV-1a: a stable 32-bit number from a text, the seed of one decision. */
export function hash(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h;
}

async function createPostgresDatabase(
  adminUrl: string,
  seed: number,
  closing: (() => Promise<unknown>)[],
  template: string | null,
): Promise<string> {
  const name = `recon_simulation_${seed}_${randomBytes(4).toString('hex')}`;
  const admin = async (statement: string) => {
    const client = new pg.Client({ connectionString: adminUrl });
    await client.connect();
    try {
      await client.query(statement);
    } finally {
      await client.end();
    }
  };
  await admin(template ? `CREATE DATABASE ${name} TEMPLATE ${template}` : `CREATE DATABASE ${name}`);
  closing.push(() => admin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`));
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return url.toString();
}
