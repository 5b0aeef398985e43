import { createServer } from 'node:http';
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMetricsRegistry, type MetricsRegistry } from '../../src/metrics/metrics-registry.ts';
import { encodeNotification } from '@recon/protocol';
import { issueExportToken } from '../../src/receive/export-token.ts';
import type { ReceiverEvent } from '../../src/receive/receiver-event.ts';
import { createReceiver } from '../../src/receive/receiver.ts';
import { startReceiver } from '../../src/receive/start-receiver.ts';
import { createArrivals } from '../support/arrivals.ts';
import { expectReconError } from '../support/expect-recon-error.ts';
import { closeServer, listenOnLoopback, refusingBaseUrl } from '../support/loopback.ts';
import { openDatabase } from '../../src/db/open-database.ts';
import { BACKENDS, createTestDatabase, hasPostgres, type TestDatabase } from '../support/test-database.ts';
import { open, send, SECRET } from './receiver-harness.ts';

describe.each(BACKENDS)('startReceiver on %s', (backend) => {
  const skip = backend === 'postgres' && !hasPostgres;
  let testDb: TestDatabase;
  beforeAll(async () => {
    if (!skip) testDb = await createTestDatabase(backend);
  });
  afterAll(async () => testDb?.drop());

  async function start(metrics: MetricsRegistry = createMetricsRegistry()) {
    const events: ReceiverEvent[] = [];
    const arrivals = createArrivals();
    const running = await startReceiver({
      db: testDb.database.db,
      secret: SECRET,
      callbackBaseUrl: 'http://127.0.0.1:9/',
      maxFileBytes: 1024 * 1024,
      metrics,
      host: '127.0.0.1',
      port: 0,
      onEvent: (event) => {
        events.push(event);
        arrivals.notify();
      },
    });
    const issue = async () => {
      const issued = await issueExportToken(testDb.database.db, {
        callbackBaseUrl: `${running.url}/`,
        orderIds: ['A'],
        compression: 'zip',
        nightlyRunId: null,
        expiresAt: new Date(Date.now() + 60_000),
      });
      const receiving = () =>
        arrivals.until(() => events.some((e) => e.type === 'delivery-receiving' && e.requestId === issued.requestId));
      return { ...issued, receiving };
    };
    return { running, events, issue, until: (condition: () => boolean) => arrivals.until(condition) };
  }

  const deliveryCount = async (requestId: string) =>
    (
      await testDb.database.db
        .selectFrom('recon.deliveries')
        .select('delivery_id')
        .where('request_id', '=', requestId)
        .execute()
    ).length;

  it.skipIf(skip)('answers /healthz with OK', async () => {
    const { running } = await start();
    try {
      expect(await send(`${running.url}/healthz`, { method: 'GET' })).toMatchObject({ status: 200, text: 'OK' });
      expect((await send(`${running.url}/healthz`, { method: 'POST', body: '' })).status).toBe(405);
    } finally {
      await running.close();
    }
  });

  it.skipIf(skip)('answers /healthz 503 naming the failure when the database does not answer', async () => {
    const { baseUrl } = await refusingBaseUrl();
    const unreachable = await openDatabase({
      databaseUrl: `postgres://recon@${new URL(baseUrl).host}/nowhere`,
      dataDir: '/nonexistent',
    });
    const receiver = createReceiver({
      db: unreachable.db,
      secret: SECRET,
      callbackBaseUrl: 'http://127.0.0.1:9/',
      maxFileBytes: 1,
      metrics: createMetricsRegistry(),
    });
    const server = createServer(receiver.handle);
    const url = await listenOnLoopback(server);
    try {
      const health = await send(`${url}/healthz`, { method: 'GET' });
      expect(health.status).toBe(503);
      expect(health.text).toMatch(/^database unreachable: .*ECONNREFUSED/);
    } finally {
      await closeServer(server);
      await unreachable.close();
    }
  });

  it.skipIf(skip)('answers /healthz 503 once the receiver drains before closing', async () => {
    const receiver = createReceiver({
      db: testDb.database.db,
      secret: SECRET,
      callbackBaseUrl: 'http://127.0.0.1:9/',
      maxFileBytes: 1,
      metrics: createMetricsRegistry(),
    });
    const server = createServer(receiver.handle);
    const url = await listenOnLoopback(server);
    try {
      await receiver.drain();
      expect(await send(`${url}/healthz`, { method: 'GET' })).toMatchObject({ status: 503, text: 'shutting down' });
    } finally {
      await closeServer(server);
    }
  });

  it.skipIf(skip)(
    'serves /metrics in Prometheus text format: what the receiver counted, and gauges read at scrape time',
    async () => {
      const metrics = createMetricsRegistry();
      let queueDepth = 3;
      metrics.gaugeFromCallback('recon_queue_depth', 'Jobs waiting.', () => queueDepth);
      const { running, issue } = await start(metrics);
      try {
        const issued = await issue();
        await send(issued.callbackUrl, { body: Buffer.from('a;b\n1;2\n') });
        await send(`${running.url}/UNKNOWNTOKEN`, { body: 'x' });
        await send(`${running.url}/notify`, {
          method: 'POST',
          body: encodeNotification({ TRANSACTIONID: 'T1' }, SECRET),
        });
        await send(`${running.url}/notify?TRANSACTIONID=T2&HASH=00`, { method: 'GET' });

        const scrape = await send(`${running.url}/metrics`, { method: 'GET' });
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
            'recon_notifications_total{hash="valid"} 1',
            'recon_notifications_total{hash="invalid"} 1',
            '# HELP recon_queue_depth Jobs waiting.',
            '# TYPE recon_queue_depth gauge',
            'recon_queue_depth 3',
          ]),
        );
        queueDepth = 0;
        expect((await send(`${running.url}/metrics`, { method: 'GET' })).text).toContain('\nrecon_queue_depth 0\n');
      } finally {
        await running.close();
      }
    },
  );

  it.skipIf(skip)('answers /metrics 500 with one line naming the gauge whose callback failed', async () => {
    const metrics = createMetricsRegistry();
    metrics.gaugeFromCallback('recon_run_lag_seconds', 'Since the last nightly run.', () =>
      Promise.reject(new Error('relation "recon.nightly_runs" does not exist')),
    );
    const { running } = await start(metrics);
    try {
      expect(await send(`${running.url}/metrics`, { method: 'GET' })).toMatchObject({
        status: 500,
        text: 'metric recon_run_lag_seconds: relation "recon.nightly_runs" does not exist',
      });
    } finally {
      await running.close();
    }
  });

  it.skipIf(skip)(
    'closes gracefully: stops accepting connections, finishes the upload in flight, then resolves',
    async () => {
      const { running, issue } = await start();
      const issued = await issue();
      const upload = open(issued.callbackUrl, { headers: { 'content-type': 'application/gzip' } });
      upload.request.write(Buffer.from([0x1f, 0x8b, 0x08, 0x00]));
      await issued.receiving();

      let closed = false;
      const closing = running.close().then(() => (closed = true));
      await expect(connectTo(running.port)).rejects.toThrow(/ECONNREFUSED/);
      expect(closed).toBe(false);
      upload.request.end(Buffer.from('rest of the file'));
      expect(await upload.answer).toMatchObject({ status: 200, text: 'OK' });
      await closing;
      expect(await deliveryCount(issued.requestId)).toBe(1);
    },
  );

  it.skipIf(skip)('cuts the uploads still open after forceAfterMs, which roll back', async () => {
    const { running, issue, events, until } = await start();
    const issued = await issue();
    const upload = open(issued.callbackUrl, { headers: { 'content-type': 'application/gzip' } });
    upload.answer.catch(() => {});
    upload.request.write(Buffer.from([0x1f, 0x8b, 0x08, 0x00]));
    await issued.receiving();
    await running.close({ forceAfterMs: 0 });
    await until(() => events.some((event) => event.type === 'delivery-refused' && event.reason === 'aborted'));
    expect(await deliveryCount(issued.requestId)).toBe(0);
  });

  it.skipIf(skip)('refuses to start with a callback base URL that leaves fewer than 8 token characters', async () => {
    await expectReconError(
      () =>
        startReceiver({
          db: testDb.database.db,
          secret: SECRET,
          callbackBaseUrl: 'https://payments.shop.example/exports/',
          maxFileBytes: 1,
          metrics: createMetricsRegistry(),
          host: '127.0.0.1',
          port: 0,
        }),
      'CONFIG',
      'RECON_CALLBACK_BASE_URL',
      'leaves 0 of',
    );
  });
});

function connectTo(port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve();
    });
    socket.once('error', reject);
  });
}
