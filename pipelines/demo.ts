import { randomBytes } from 'node:crypto';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { dateInZone } from '@recon/protocol';
import { createPaymentClient } from '../src/client/payment-client.ts';
import type { Config } from '../src/config/config.ts';
import { migrate } from '../src/db/migrate.ts';
import { openDatabase } from '../src/db/open-database.ts';
import { ReconError } from '../src/errors.ts';
import { createMetricsRegistry } from '../src/metrics/metrics-registry.ts';
import { listNightlyRuns, type NightlyRunReport } from '../src/nightly/nightly-run-report.ts';
import { triggerNightlyRun } from '../src/nightly/nightly-scheduler.ts';
import { advanceSender, startNightlyWorker } from './nightly/nightly-worker.ts';
import { startReconServices } from './nightly/recon-services.ts';
import { loadRunReport, oldestOpenExceptions, oldestOpenExceptionsPerStatus } from '../src/report/report-queries.ts';
import { HTML_LISTED_PER_STATUS, renderHtml } from '../src/report/report-html.ts';
import { renderTable } from '../src/report/report-table.ts';
import { writeFileAtomically } from '../src/report/report-output.ts';
import { createSandbox, formatOrdersCsv, instalmentAndWalletAccounts, scenarioOrders } from '@recon/sandbox';
import { syncAccounts } from '../src/reconcile/sync-accounts.ts';
import { importOrderFiles } from './import-orders.ts';

export interface DemoOptions {
  readonly config: Config;
  /** Orders of the seeded scenario. */
  readonly orders: number;
  readonly seed: number;
  /** A line saying where the demo stands, as it goes (for a terminal). */
  readonly onProgress?: (message: string) => void;
  readonly signal?: AbortSignal;
}

export interface DemoResult {
  readonly run: NightlyRunReport;
  /** The terminal report of the run's reconciliation. */
  readonly report: string;
  readonly htmlReport: string;
  readonly databaseDir: string;
}

const EXCEPTIONS_LISTED = 15;
const POLL_MS = 200;

/**
 * `npm start`: the nightly flow whole, on one machine with nothing installed. The embedded database (a fresh one
 * under RECON_DATA_DIR/demo each time, so the demo always shows a whole run and never touches real data), the
 * sandbox of the payment service in this process with a seeded scenario, the merchant's orders imported from the
 * scenario's csv (with a deliberate mistake of every kind), recon serve's receiver on a loopback port, a worker,
 * and one nightly run through real HTTP callbacks carrying real gzip files; then the reconciliation's report. The
 * merchant has two accounts, one per payment method (instalment, wallet), each with its own secret, in one group:
 * each batch is one SCOPE=CLIENTSGROUP export, and the report reads per account too.
 */
export async function runDemo(options: DemoOptions): Promise<DemoResult> {
  const { config } = options;
  const progress = options.onProgress ?? (() => {});
  const databaseDir = path.join(config.dataDir, 'demo');
  await rm(databaseDir, { recursive: true, force: true });
  await mkdir(databaseDir, { recursive: true });
  const database = await openDatabase({ databaseUrl: undefined, dataDir: databaseDir });
  const closing: (() => Promise<void>)[] = [() => database.close()];
  try {
    progress('migrating the embedded database');
    await migrate(database);
    const accounts = instalmentAndWalletAccounts({
      instalment: randomBytes(12).toString('base64url'),
      wallet: randomBytes(12).toString('base64url'),
    });
    await syncAccounts(
      database.db,
      accounts.map((a) => ({ identifier: a.identifier, group: a.group, paymentMethods: a.paymentMethods })),
    );
    // The sandbox is started second: its client goes to the worker, and the worker starts with the receiver. So the
    // services start without a worker, which joins once the sandbox listens (the queue keeps what arrives before).
    const services = await startReconServices({
      database,
      heartbeatSeconds: config.queue.heartbeatSeconds,
      receiver: {
        host: '127.0.0.1',
        port: 0,
        accounts: accounts.map(({ identifier, secret }) => ({ identifier, secret })),
        maxFileBytes: config.limits.maxFileBytes,
        metrics: createMetricsRegistry(),
      },
    });
    closing.push(() => services.close({ graceful: false }));
    const receiverUrl = services.receiver!.url;

    progress(`seeding the sandbox with ${options.orders} orders`);
    const sandbox = createSandbox({
      accounts,
      seed: options.seed,
      seedOrders: options.orders,
      notifyUrl: `${receiverUrl}/notify`,
    });
    closing.push(() => sandbox.close());
    const sandboxUrl = await sandbox.listen(0, '127.0.0.1');
    // The service notified every operation of the scenario as it seeded it: the receiver stores them all before the
    // nightly run's instant, so that the run finds in them the ORDERIDs the merchant's orders lack.
    progress("receiving the scenario's notifications");
    await sandbox.notifications.idle();
    const asOf = sandbox.clock.now();

    progress("importing the merchant's orders");
    const ordersFile = path.join(databaseDir, 'orders.csv');
    await writeFile(ordersFile, formatOrdersCsv(scenarioOrders(sandbox.store, sandbox.scenario!, asOf)));
    const [imported] = await importOrderFiles(database, [ordersFile], {
      limits: config.limits,
      signal: options.signal,
    });
    if (imported?.status !== 'loaded')
      throw new ReconError(
        'ORDERS_SOURCE',
        `the demo's orders did not import: ${imported && 'error' in imported ? imported.error : 'no result'}`,
      );

    const worker = await startNightlyWorker(services.boss, database, {
      accounts: accounts.map(({ identifier, secret, group }) => ({
        identifier,
        group,
        client: createPaymentClient({
          baseUrl: sandboxUrl,
          identifier,
          secret,
          timeoutMs: 10_000,
          retry: { attempts: 3, baseDelayMs: 100 },
        }),
      })),
      callbackBaseUrl: services.callbackBaseUrl,
      nightly: config.nightly,
      reconcile: config.reconcile,
      ingest: { timezone: 'UTC', limits: config.limits },
      pollingIntervalSeconds: 0.5,
    });
    closing.push(async () => worker.stop());
    const runDate = dateInZone(asOf, config.nightly.scheduleTimezone);
    const { nightlyRunId } = await triggerNightlyRun(database.db, runDate, asOf, advanceSender(services.boss));
    let run = await nightlyRun(database, nightlyRunId);
    while (run.state !== 'reconciled' && run.state !== 'failed') {
      const ingested = run.requests['ingested'] ?? 0;
      progress(`nightly run ${runDate}: ${run.state}, ${ingested} of ${run.batches ?? '?'} exports ingested`);
      await sleep(POLL_MS, undefined, options.signal ? { signal: options.signal } : {});
      run = await nightlyRun(database, nightlyRunId);
    }

    progress('writing the reports');
    const report = await loadRunReport(database.db, run.reconciliationRunId!, { timeZone: config.reportTimezone });
    const generatedAt = new Date();
    const listed = await oldestOpenExceptionsPerStatus(database.db, report.run.runId, HTML_LISTED_PER_STATUS);
    const htmlReport = await writeFileAtomically(path.join(databaseDir, 'report.html'), [
      renderHtml(report, listed, { generatedAt, perGroup: HTML_LISTED_PER_STATUS }),
    ]);
    const table = renderTable(report, await oldestOpenExceptions(database.db, report.run.runId, EXCEPTIONS_LISTED), {
      generatedAt,
    });
    return { run, report: table, htmlReport, databaseDir };
  } finally {
    for (const close of closing.reverse()) await close().catch(() => {});
  }
}

async function nightlyRun(
  database: { db: Parameters<typeof listNightlyRuns>[0] },
  nightlyRunId: string,
): Promise<NightlyRunReport> {
  const [run] = await listNightlyRuns(database.db, { nightlyRunId });
  return run!;
}
