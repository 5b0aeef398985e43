import { createServer, type Server } from 'node:http';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createMetricsRegistry } from '../../src/metrics/metrics-registry.ts';
import { describeProbe, latestCallbackProbe, probeCallbackBase } from '../../src/nightly/callback-probe.ts';
import { registerNightlyMetrics } from '../../src/nightly/nightly-metrics.ts';
import { openJobQueue } from '../../src/queue/job-queue.ts';
import { listNightlyRuns } from '../../src/nightly/nightly-run-report.ts';
import type { ReceiverEvent } from '../../src/receive/receiver-event.ts';
import { startReceiver, type RunningReceiver } from '../../src/receive/start-receiver.ts';
import { closeServer, listenOnLoopback, refusingBaseUrl } from '../support/loopback.ts';
import { BACKENDS, createTestDatabase, hasPostgres, type TestDatabase } from '../support/test-database.ts';

describe.each(BACKENDS)('the probe of the callback base on %s', (backend) => {
  const skip = backend === 'postgres' && !hasPostgres;
  let testDb: TestDatabase;
  let receiver: RunningReceiver;
  const events: ReceiverEvent[] = [];
  const others: Server[] = [];

  beforeAll(async () => {
    if (skip) return;
    testDb = await createTestDatabase(backend);
    // /metrics counts the queue's jobs too: its tables must exist.
    const boss = await openJobQueue(testDb.database, { heartbeatSeconds: 30 });
    await boss.stop({ graceful: false, close: false });
    receiver = await startReceiver({
      db: testDb.database.db,
      accounts: [{ identifier: 'PROBE-SHOP', secret: 'probe-secret' }],
      callbackBaseUrl: 'http://127.0.0.1:9/cb/',
      maxFileBytes: 1024 * 1024,
      metrics: createMetricsRegistry(),
      host: '127.0.0.1',
      port: 0,
      onEvent: (event) => events.push(event),
    });
  });
  afterEach(async () => {
    await Promise.all(others.splice(0).map(closeServer));
  });
  afterAll(async () => {
    await receiver?.close();
    await testDb?.drop();
  });

  /** Another HTTP server on loopback, answering every request with `status`: where a wrong base may lead. */
  async function otherServer(status: number): Promise<string> {
    const server = createServer((request, response) => {
      request.resume();
      response.writeHead(status, { 'content-type': 'text/plain' }).end(status === 200 ? 'OK' : 'Not Found');
    });
    others.push(server);
    return listenOnLoopback(server);
  }

  it.skipIf(skip)("a base that leads to recon's receiver is reachable: the receiver marked the probe", async () => {
    const result = await probeCallbackBase(testDb.database.db, `${receiver.url}/cb/`, { reason: 'serve start' });
    expect(result).toMatchObject({ reachable: true, detail: 'a recon receiver answered HTTP 200 (probe received)' });
    expect(events).toContainEqual({ type: 'probe-received' });
    // Nothing was stored as a delivery, and the token is spent: the same probe again is an unknown token.
    expect(await testDb.database.db.selectFrom('recon.deliveries').select('delivery_id').execute()).toEqual([]);
  });

  it.skipIf(skip)('a base where nothing listens is unreachable, and says why', async () => {
    const { baseUrl } = await refusingBaseUrl();
    const result = await probeCallbackBase(testDb.database.db, `${baseUrl}/cb/`, { reason: 'serve start' });
    expect(result!.reachable).toBe(false);
    expect(result!.detail).toMatch(/^cannot connect: .*ECONNREFUSED/);
    expect(describeProbe(result!)).toMatch(
      new RegExp(
        `^callback base ${baseUrl}/cb/ does not reach recon's receiver: cannot connect: .*check RECON_CALLBACK_BASE_URL`,
      ),
    );
  });

  it.skipIf(skip)('a base on the wrong path of the receiver, or on another server, is unreachable', async () => {
    const wrongPath = await probeCallbackBase(testDb.database.db, `${receiver.url}/elsewhere/`, {
      reason: 'serve start',
    });
    expect(wrongPath).toMatchObject({ reachable: false, detail: 'HTTP 404 (not found)' });
    const stranger = await probeCallbackBase(testDb.database.db, `${await otherServer(200)}/cb/`, {
      reason: 'serve start',
    });
    expect(stranger).toMatchObject({
      reachable: false,
      detail: 'HTTP 200 (OK), but no recon receiver on this database got the probe: the URL leads to another server',
    });
  });

  it.skipIf(skip)('a server that does not answer in time is unreachable', async () => {
    const server = createServer(() => {}); // takes the request, never answers
    others.push(server);
    const base = await listenOnLoopback(server);
    const result = await probeCallbackBase(testDb.database.db, `${base}/cb/`, {
      reason: 'serve start',
      timeoutMs: 200,
    });
    expect(result).toMatchObject({ reachable: false, detail: 'no answer within 0.2 s' });
  });

  it.skipIf(skip)(
    'a nightly run is probed once however many workers try; runs, the latest probe and /metrics show it',
    async () => {
      const db = testDb.database.db;
      const run = await db
        .insertInto('recon.nightly_runs')
        .values({ run_date: '2026-11-11', state: 'requesting', as_of: new Date() })
        .returning('nightly_run_id')
        .executeTakeFirstOrThrow();
      const nightlyRunId = String(run.nightly_run_id);
      const { baseUrl } = await refusingBaseUrl();
      const first = await probeCallbackBase(db, `${baseUrl}/`, { reason: 'nightly run', nightlyRunId });
      expect(first!.reachable).toBe(false);
      expect(await probeCallbackBase(db, `${baseUrl}/`, { reason: 'nightly run', nightlyRunId })).toBeUndefined();

      const [report] = await listNightlyRuns(db, { nightlyRunId });
      expect(report!.callbackProbe).toEqual({
        callbackBaseUrl: `${baseUrl}/`,
        reachable: false,
        detail: first!.detail,
        checkedAt: first!.checkedAt.toISOString(),
      });
      expect(await latestCallbackProbe(db)).toEqual(first);

      const metrics = createMetricsRegistry();
      registerNightlyMetrics(metrics, db, { schedule: '30 2 * * *', timezone: 'Europe/Paris', lateHours: 6 });
      expect(await metrics.metrics()).toContain(`recon_callback_base_reachable{callback_base="${baseUrl}/"} 0\n`);
      await probeCallbackBase(db, `${receiver.url}/cb/`, { reason: 'serve start' });
      expect(await metrics.metrics()).toContain(
        `recon_callback_base_reachable{callback_base="${receiver.url}/cb/"} 1\n`,
      );
    },
  );
});
