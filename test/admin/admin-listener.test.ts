import { createServer } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAdminListener, type AdminListener } from '../../src/admin/admin-listener.ts';
import { openDatabase } from '../../src/db/open-database.ts';
import { createMetricsRegistry, type MetricsRegistry } from '../../src/metrics/metrics-registry.ts';
import { scrapeGauge } from '../../src/metrics/scrape-gauge.ts';
import { expectReconError } from '../support/expect-recon-error.ts';
import { closeServer, listenOnLoopback, refusingBaseUrl } from '../support/loopback.ts';
import { BACKENDS, createTestDatabase, hasPostgres, type TestDatabase } from '../support/test-database.ts';
import { send, startTestReceiver } from '../receive/receiver-harness.ts';

describe.each(BACKENDS)('the admin listener on %s', (backend) => {
  const skip = backend === 'postgres' && !hasPostgres;
  let testDb: TestDatabase;
  beforeAll(async () => {
    if (!skip) testDb = await createTestDatabase(backend);
  });
  afterAll(async () => testDb?.drop());

  const start = (metrics: MetricsRegistry = createMetricsRegistry()) =>
    startAdminListener({ host: '127.0.0.1', port: 0, metrics, db: testDb.database.db });

  async function using(admin: AdminListener, test: () => Promise<void>): Promise<void> {
    try {
      await test();
    } finally {
      await admin.close();
    }
  }

  it.skipIf(skip)('answers /healthz OK while the database answers, 405 to other methods, 404 elsewhere', async () => {
    const admin = await start();
    expect(admin.url).toBe(`http://127.0.0.1:${admin.port}`);
    await using(admin, async () => {
      expect(await send(`${admin.url}/healthz`, { method: 'GET' })).toMatchObject({ status: 200, text: 'OK' });
      expect((await send(`${admin.url}/healthz`, { method: 'HEAD' })).status).toBe(200);
      expect(await send(`${admin.url}/healthz`, { method: 'POST', body: 'x' })).toMatchObject({
        status: 405,
        headers: { allow: 'GET, HEAD' },
      });
      expect((await send(`${admin.url}/notify`, { method: 'GET' })).status).toBe(404);
      expect((await send(`${admin.url}/`, { method: 'GET' })).status).toBe(404);
    });
  });

  it.skipIf(skip)('answers /healthz 503 once draining, and still serves /metrics', async () => {
    const admin = await start();
    await using(admin, async () => {
      admin.drain();
      expect(await send(`${admin.url}/healthz`, { method: 'GET' })).toMatchObject({
        status: 503,
        text: 'shutting down',
      });
      expect((await send(`${admin.url}/metrics`, { method: 'GET' })).status).toBe(200);
    });
  });

  it.skipIf(skip)(
    "serves /metrics in Prometheus text format: the receiver's counts and sizes, gauges read at each scrape, the process",
    async () => {
      const metrics = createMetricsRegistry();
      let queueDepth = 3;
      scrapeGauge(metrics, {
        name: 'recon_queue_depth',
        help: 'Jobs waiting.',
        read: () => Promise.resolve(queueDepth),
      });
      const receiver = await startTestReceiver(testDb.database, { metrics });
      const admin = await start(metrics);
      await using(admin, async () => {
        const issued = await receiver.issue();
        expect((await send(issued.callbackUrl, { body: Buffer.from('a;b\n1;2\n') })).status).toBe(200);
        await send(`${receiver.url}/UNKNOWNTOKEN`, { body: 'x' });

        const scrape = await send(`${admin.url}/metrics`, { method: 'GET' });
        expect(scrape.status).toBe(200);
        expect(scrape.headers['content-type']).toBe('text/plain; version=0.0.4; charset=utf-8');
        const lines = scrape.text.split('\n');
        expect(lines).toEqual(
          expect.arrayContaining([
            '# TYPE recon_deliveries_accepted_total counter',
            'recon_deliveries_accepted_total{outcome="stored"} 1',
            'recon_deliveries_accepted_total{outcome="repeated"} 0',
            'recon_deliveries_refused_total{reason="unknown_token"} 1',
            'recon_delivered_bytes_total 8',
            '# TYPE recon_delivery_size_bytes histogram',
            'recon_delivery_size_bytes_bucket{le="1024"} 1',
            'recon_delivery_size_bytes_count 1',
            'recon_delivery_size_bytes_sum 8',
            '# HELP recon_queue_depth Jobs waiting.',
            '# TYPE recon_queue_depth gauge',
            'recon_queue_depth 3',
            '# TYPE nodejs_eventloop_lag_seconds gauge',
            '# TYPE nodejs_heap_size_used_bytes gauge',
            '# TYPE nodejs_gc_duration_seconds histogram',
            '# TYPE process_resident_memory_bytes gauge',
          ]),
        );
        queueDepth = 0;
        expect((await send(`${admin.url}/metrics`, { method: 'GET' })).text).toContain('\nrecon_queue_depth 0\n');
      });
      await receiver.close();
    },
  );

  it.skipIf(skip)('answers /metrics 500 with one line naming the gauge whose read failed', async () => {
    const metrics = createMetricsRegistry();
    scrapeGauge(metrics, {
      name: 'recon_run_lag_seconds',
      help: 'Since the last nightly run.',
      read: () => Promise.reject(new Error('relation "recon.nightly_runs"\ndoes not exist')),
    });
    const admin = await start(metrics);
    await using(admin, async () => {
      expect(await send(`${admin.url}/metrics`, { method: 'GET' })).toMatchObject({
        status: 500,
        text: 'metric recon_run_lag_seconds: relation "recon.nightly_runs" does not exist',
      });
    });
  });
});

describe('the admin listener, whatever the database', () => {
  it('answers /healthz 503 naming the failure when the database does not answer', async () => {
    const { baseUrl } = await refusingBaseUrl();
    const unreachable = await openDatabase({
      databaseUrl: `postgres://recon@${new URL(baseUrl).host}/nowhere`,
      dataDir: '/nonexistent',
    });
    const admin = await startAdminListener({
      host: '127.0.0.1',
      port: 0,
      metrics: createMetricsRegistry(),
      db: unreachable.db,
    });
    try {
      const health = await send(`${admin.url}/healthz`, { method: 'GET' });
      expect(health.status).toBe(503);
      expect(health.text).toMatch(/^database unreachable: .*ECONNREFUSED/);
    } finally {
      await admin.close();
      await unreachable.close();
    }
  });

  it('refuses to start on a port in use, naming the variables (ReconError CONFIG)', async () => {
    const taken = createServer();
    const url = await listenOnLoopback(taken);
    const unreachable = await openDatabase({ databaseUrl: 'postgres://recon@127.0.0.1:9/nowhere', dataDir: '/x' });
    try {
      await expectReconError(
        () =>
          startAdminListener({
            host: '127.0.0.1',
            port: Number(new URL(url).port),
            metrics: createMetricsRegistry(),
            db: unreachable.db,
          }),
        'CONFIG',
        'RECON_ADMIN_PORT',
        'EADDRINUSE',
      );
    } finally {
      await closeServer(taken);
      await unreachable.close();
    }
  });
});
