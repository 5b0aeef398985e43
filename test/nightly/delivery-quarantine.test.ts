import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPaymentClient } from '../../src/client/payment-client.ts';
import { loadConfig } from '../../src/config/config.ts';
import { advanceNightlyRun } from '../../src/nightly/advance-nightly-run.ts';
import { endFailedAttempt, startIngestAttempt, WORKER_DIED } from '../../src/nightly/delivery-attempts.ts';
import { ingestDelivery } from '../../pipelines/nightly/ingest-delivery.ts';
import { registerWorkerMetrics } from '../../pipelines/nightly/worker-metrics.ts';
import { createMetricsRegistry } from '../../src/metrics/metrics-registry.ts';
import { startNightlyRun } from '../../src/nightly/nightly-run.ts';
import { listNightlyRuns, formatNightlyRun } from '../../src/nightly/nightly-run-report.ts';
import { answering, startServer, type LoopbackServer } from '../client/loopback-servers.ts';
import { insertOrders } from '../reconcile/reconcile-scenario.ts';
import { BACKENDS, createTestDatabase, hasPostgres, type TestDatabase } from '../support/test-database.ts';

const ACCEPTED = { EXECCODE: '0000', MESSAGE: 'The export will be sent', OPERATIONTYPE: 'getTransactions' };
const INGEST = { timezone: 'UTC', limits: loadConfig({}).limits };

/**
 * A delivery that cannot be ingested, however often it is tried, must not be tried forever: two attempts that die
 * with their worker, or fail the same way, quarantine it, and its batch is asked for again.
 */
describe.each(BACKENDS)('quarantined deliveries on %s', (backend) => {
  const skip = backend === 'postgres' && !hasPostgres;
  let testDb: TestDatabase;
  let service: LoopbackServer;
  let day = 0;

  beforeAll(async () => {
    if (skip) return;
    testDb = await createTestDatabase(backend);
    service = await startServer(answering(ACCEPTED));
    await insertOrders(testDb.database, [
      { id: 'Q-1', amount: 1000n, status: 'paid', createdAt: new Date(Date.now() - 86_400_000) },
    ]);
  });
  afterAll(async () => {
    await service?.close();
    await testDb?.drop();
  });

  function deps() {
    return {
      database: testDb.database,
      accounts: [
        {
          identifier: 'Q',
          client: createPaymentClient({
            baseUrl: service.baseUrl,
            identifier: 'Q',
            secret: 's',
            timeoutMs: 2000,
            retry: { attempts: 1, baseDelayMs: 10 },
          }),
        },
      ],
      nightly: { ...loadConfig({}).nightly, exportAttempts: 3 },
      reconcile: loadConfig({}).reconcile,
      callbackBaseUrl: 'http://127.0.0.1:9/',
      scheduleAdvance: async () => {},
    };
  }

  /** A nightly run whose one batch was requested and delivered: stored bytes that do not match their sha256. */
  async function deliveredRun(): Promise<{ nightlyRunId: string; deliveryId: string; requestId: string }> {
    const db = testDb.database.db;
    const { run } = await startNightlyRun(db, `2026-10-${String(++day).padStart(2, '0')}`, new Date());
    await advanceNightlyRun(deps(), run.nightlyRunId);
    const request = await db
      .selectFrom('recon.export_requests')
      .select('request_id')
      .where('nightly_run_id', '=', run.nightlyRunId)
      .executeTakeFirstOrThrow();
    const requestId = String(request.request_id);
    const delivery = await db
      .insertInto('recon.deliveries')
      .values({ request_id: requestId, sha256: 'a'.repeat(64), bytes: 5 })
      .returning('delivery_id')
      .executeTakeFirstOrThrow();
    await db
      .insertInto('recon.delivery_chunks')
      .values({ delivery_id: String(delivery.delivery_id), seq: 0, data: Buffer.from('bytes') })
      .execute();
    await db
      .updateTable('recon.export_requests')
      .set({ state: 'delivered' })
      .where('request_id', '=', requestId)
      .execute();
    return { nightlyRunId: run.nightlyRunId, deliveryId: String(delivery.delivery_id), requestId };
  }

  const deliveryRow = (deliveryId: string) =>
    testDb.database.db
      .selectFrom('recon.deliveries')
      .select(['state', 'attempts', 'attempt_open', 'failure', 'quarantined_at'])
      .where('delivery_id', '=', deliveryId)
      .executeTakeFirstOrThrow();

  it.skipIf(skip)(
    'quarantines a delivery whose ingest fails the same way twice, fails its request, and the run asks for the batch again',
    async () => {
      const { nightlyRunId, deliveryId, requestId } = await deliveredRun();
      const quarantined: string[] = [];
      const registry = createMetricsRegistry();
      const options = {
        ...INGEST,
        onQuarantined: (id: string, reason: string) => void quarantined.push(`${id}: ${reason}`),
        ingestSeconds: registerWorkerMetrics(registry).ingestSeconds,
      };

      await expect(ingestDelivery(testDb.database, deliveryId, options)).rejects.toThrow(
        /do not match its size \(5 bytes\) and sha256/,
      );
      expect(await deliveryRow(deliveryId)).toMatchObject({
        state: 'received',
        attempts: 1,
        attempt_open: false,
        quarantined_at: null,
      });

      expect(await ingestDelivery(testDb.database, deliveryId, options)).toBe(nightlyRunId);
      const row = await deliveryRow(deliveryId);
      expect(row).toMatchObject({ state: 'failed', attempts: 2, attempt_open: false });
      expect(row.quarantined_at).not.toBeNull();
      expect(row.failure).toMatch(/^quarantined after 2 attempts failing the same way: delivery \d+: stored chunks/);
      expect(quarantined).toEqual([`${deliveryId}: ${row.failure}`]);

      // Nothing more is done with it, however often its job runs.
      expect(await ingestDelivery(testDb.database, deliveryId, options)).toBe(nightlyRunId);
      expect(await deliveryRow(deliveryId)).toMatchObject({ state: 'failed', attempts: 2 });
      // Each attempt was timed; the skipped one was not.
      expect(await registry.metrics()).toContain('recon_ingest_duration_seconds_count{outcome="error"} 2\n');

      await advanceNightlyRun(deps(), nightlyRunId);
      const requests = await testDb.database.db
        .selectFrom('recon.export_requests')
        .select(['request_id', 'attempt', 'state', 'failure'])
        .where('nightly_run_id', '=', nightlyRunId)
        .orderBy('attempt')
        .execute();
      expect(requests).toEqual([
        { request_id: requestId, attempt: 1, state: 'failed', failure: `delivery ${deliveryId} ${row.failure}` },
        { request_id: expect.any(String), attempt: 2, state: 'requested', failure: null },
      ]);
      const [report] = await listNightlyRuns(testDb.database.db, { nightlyRunId });
      expect(report!.failedDeliveries).toEqual([
        { deliveryId, batch: 1, attempt: 1, quarantined: true, failure: row.failure },
      ]);
      expect(formatNightlyRun(report!).split('\n')[1]).toBe(
        `  delivery ${deliveryId} (batch 1, request 1) quarantined: ${row.failure}`,
      );
    },
  );

  it.skipIf(skip)(
    'takes an attempt found still open for a dead worker, and quarantines the delivery on the second death',
    async () => {
      const { deliveryId } = await deliveredRun();
      expect(await startIngestAttempt(testDb.database.db, deliveryId)).toMatchObject({ kind: 'ingest' });
      // Its worker dies: the attempt is never closed.
      expect(await startIngestAttempt(testDb.database.db, deliveryId)).toMatchObject({ kind: 'ingest' });
      expect(await deliveryRow(deliveryId)).toMatchObject({
        state: 'received',
        attempts: 2,
        attempt_open: true,
        failure: WORKER_DIED,
      });
      // And dies again.
      const third = await startIngestAttempt(testDb.database.db, deliveryId);
      expect(third).toMatchObject({
        kind: 'quarantined',
        reason: `quarantined after 2 attempts: ${WORKER_DIED}, twice`,
      });
      expect(await deliveryRow(deliveryId)).toMatchObject({
        state: 'failed',
        attempt_open: false,
        failure: `quarantined after 2 attempts: ${WORKER_DIED}, twice`,
      });
    },
  );

  it.skipIf(skip)("holds neither different failures nor the database's own against a delivery", async () => {
    const { deliveryId } = await deliveredRun();
    const db = testDb.database.db;
    for (const failure of ['first reason', 'second reason']) {
      await startIngestAttempt(db, deliveryId);
      expect(await endFailedAttempt(db, deliveryId, failure, false)).toBeUndefined();
    }
    for (let outage = 0; outage < 3; outage++) {
      await startIngestAttempt(db, deliveryId);
      expect(await endFailedAttempt(db, deliveryId, 'Connection terminated unexpectedly', true)).toBeUndefined();
    }
    expect(await deliveryRow(deliveryId)).toMatchObject({
      state: 'received',
      attempts: 5,
      attempt_open: false,
      failure: 'second reason',
      quarantined_at: null,
    });
  });
});
