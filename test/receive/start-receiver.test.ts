import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMetricsRegistry, type MetricsRegistry } from '../../src/metrics/metrics-registry.ts';
import { issueExportToken } from '../../src/receive/export-token.ts';
import type { ReceiverEvent } from '../../src/receive/receiver-event.ts';
import { startReceiver } from '../../src/receive/start-receiver.ts';
import { createArrivals } from '../support/arrivals.ts';
import { expectReconError } from '../support/expect-recon-error.ts';
import { BACKENDS, createTestDatabase, hasPostgres, type TestDatabase } from '../support/test-database.ts';
import { IDENTIFIER, open, send, SECRET } from './receiver-harness.ts';

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
      accounts: [{ identifier: IDENTIFIER, secret: SECRET }],
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

  it.skipIf(skip)(
    'answers 404 to /healthz and /metrics, even under a callback path of `/`: they are on the admin listener',
    async () => {
      const { running, issue } = await start();
      try {
        // The receiver counts on its registry all the same: it is served elsewhere.
        const issued = await issue();
        expect((await send(issued.callbackUrl, { body: Buffer.from('a;b\n1;2\n') })).status).toBe(200);
        for (const path of ['/healthz', '/metrics'])
          for (const method of ['GET', 'HEAD', 'POST'])
            expect(
              (await send(`${running.url}${path}`, method === 'POST' ? { method, body: 'x' } : { method })).status,
            ).toBe(404);
        expect((await send(`${running.url}/metrics`, { method: 'GET' })).text).toBe(
          'not found: served on the admin listener (RECON_ADMIN_PORT)',
        );
      } finally {
        await running.close();
      }
    },
  );

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
          accounts: [{ identifier: IDENTIFIER, secret: SECRET }],
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
