import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSandbox, type Sandbox } from '@recon/sandbox';
import { DAY, insertOrders } from '../reconcile/reconcile-scenario.ts';
import { refusingBaseUrl } from '../support/loopback.ts';
import { BACKENDS, createTestDatabase, hasPostgres, type TestDatabase } from '../support/test-database.ts';
import { waitUntil } from '../support/wait-until.ts';
import { listeningUrls, startRecon, type RunningRecon } from './run-recon.ts';

const IDENTIFIER = 'METRICS-CLI';
const SECRET = 'metrics-cli-secret';

/** The value of one series in a Prometheus text scrape, or undefined when it is not there. */
function sample(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

/**
 * What an operator scrapes: a real `recon serve` runs a nightly run end to end (its scheduler fires every two
 * seconds; the sandbox delivers the exports to its public listener), and its admin listener's /metrics then shows
 * every histogram with observations, the nightly gauges, and the process's own metrics.
 */
describe.each(BACKENDS)('recon serve /metrics on its admin listener, on %s', (backend) => {
  const skip = backend === 'postgres' && !hasPostgres;
  let testDb: TestDatabase;
  let sandbox: Sandbox;
  let recon: RunningRecon;
  let url: string;
  let adminUrl: string;

  beforeAll(async () => {
    if (skip) return;
    testDb = await createTestDatabase(backend);
    sandbox = createSandbox({ identifier: IDENTIFIER, secret: SECRET, seed: 5, seedOrders: 20 });
    const serviceUrl = await sandbox.listen(0);
    await insertOrders(
      testDb.database,
      sandbox.scenario!.orderIds.map((id) => ({
        id,
        amount: 100n,
        status: 'paid' as const,
        createdAt: new Date(Date.now() - DAY),
      })),
    );
    // recon serve is the only process on the database: an embedded one is one process's at a time.
    await testDb.close();
    const { baseUrl, port } = await refusingBaseUrl();
    recon = startRecon(['serve'], {
      ...testDb.env,
      RECON_SERVICE_URL: serviceUrl,
      RECON_IDENTIFIER: IDENTIFIER,
      RECON_SECRET: SECRET,
      RECON_PORT: String(port),
      RECON_CALLBACK_BASE_URL: `${baseUrl}/`,
      RECON_SCHEDULE: '*/2 * * * * *',
      RECON_EXPORT_BATCH_SIZE: '10',
      // Not set: RECON_ADMIN_HOST, whose default is checked below. Any free port: test files run side by side.
      RECON_ADMIN_PORT: '0',
    });
    ({ adminUrl } = await listeningUrls(recon));
    url = baseUrl;
  }, 60_000);
  afterAll(async () => {
    if (recon) {
      recon.child.kill('SIGTERM');
      expect((await recon.done).code).toBe(0);
    }
    await sandbox?.close();
    await testDb?.drop();
  });

  it.skipIf(skip)('binds the admin listener to loopback by default, on a port of its own', () => {
    expect(adminUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(adminUrl).not.toBe(url);
  });

  it.skipIf(skip)(
    'answers 404 on the public port to /metrics and /healthz, and serves them on the admin one',
    async () => {
      for (const path of ['/metrics', '/healthz']) expect((await fetch(url + path)).status).toBe(404);
      const health = await fetch(`${adminUrl}/healthz`);
      expect({ status: health.status, text: await health.text() }).toEqual({ status: 200, text: 'OK' });
    },
  );

  it.skipIf(skip)(
    'shows after a nightly run: delivery sizes, ingest, request and reconcile seconds, runs by state, the process',
    async () => {
      let text = '';
      await waitUntil(
        'the nightly run reconciled, as /metrics says',
        async () => {
          text = await (await fetch(`${adminUrl}/metrics`)).text();
          return sample(text, 'recon_nightly_runs{state="reconciled"}') === 1;
        },
        { timeoutMs: 90_000, everyMs: 250 },
      ).catch((error: unknown) => {
        throw new Error(`${(error as Error).message}\n${recon.stderrSoFar()}`);
      });
      const batches = Math.ceil(sandbox.scenario!.orderIds.length / 10);
      expect(sample(text, 'recon_delivery_size_bytes_count')).toBe(batches);
      expect(sample(text, 'recon_delivery_size_bytes_sum')).toBe(sample(text, 'recon_delivered_bytes_total'));
      expect(sample(text, 'recon_deliveries_accepted_total{outcome="stored"}')).toBe(batches);
      expect(sample(text, 'recon_ingest_duration_seconds_count{outcome="loaded"}')).toBe(batches);
      expect(
        sample(text, 'recon_service_request_duration_seconds_count{operation="getTransactions",outcome="0xxx"}'),
      ).toBe(batches);
      expect(sample(text, 'recon_reconcile_duration_seconds_count')).toBe(1);
      expect(sample(text, 'recon_reconcile_duration_seconds_sum')).toBeGreaterThan(0);
      expect(sample(text, 'recon_jobs_processed_total{queue="recon-delivery-ingest",outcome="completed"}')).toBe(
        batches,
      );
      expect(sample(text, 'recon_nightly_latest_run_failed')).toBe(0);
      expect(sample(text, 'recon_nightly_run_late')).toBe(0);
      expect(sample(text, 'recon_queue_depth{queue="recon-delivery-ingest"}')).toBe(0);
      // recon serve probed its callback base at start: its own public listener.
      expect(sample(text, `recon_callback_base_reachable{callback_base="${url}/"}`)).toBe(1);
      // Node's own, under prom-client's usual names.
      expect(sample(text, 'nodejs_eventloop_lag_seconds')).toBeGreaterThanOrEqual(0);
      expect(sample(text, 'nodejs_heap_size_used_bytes')).toBeGreaterThan(0);
      expect(sample(text, 'process_resident_memory_bytes')).toBeGreaterThan(0);
      expect(text).toContain('# TYPE nodejs_gc_duration_seconds histogram');
    },
    120_000,
  );
});
