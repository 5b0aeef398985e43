import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPaymentClient } from '../../src/client/payment-client.ts';
import { loadConfig } from '../../src/config/config.ts';
import { advanceNightlyRun, type NightlyDependencies } from '../../src/nightly/advance-nightly-run.ts';
import { startNightlyRun } from '../../src/nightly/nightly-run.ts';
import { sendUnsentRequests } from '../../src/nightly/send-export-requests.ts';
import { silentLogger } from '../../src/log/logger.ts';
import { answering, startServer, type LoopbackServer } from '../client/loopback-servers.ts';
import { insertOrders } from '../reconcile/reconcile-scenario.ts';
import { BACKENDS, createTestDatabase, hasPostgres, type TestDatabase } from '../support/test-database.ts';

/**
 * RECON_EXPORT_IN_FLIGHT: a run asks the service for no more exports at once than it has room for, and asks for the
 * next as each is ingested. The service here answers every request and delivers nothing: the test moves each
 * request on itself, as a delivery and its ingest would.
 */
const T0 = new Date('2026-11-23T02:30:00Z');
const at = (ms: number) => new Date(T0.getTime() + ms);
const ACCEPTED = { EXECCODE: '0000', MESSAGE: 'The export will be sent', OPERATIONTYPE: 'getTransactions' };
const ORDERS = ['FLY-1', 'FLY-2', 'FLY-3', 'FLY-4', 'FLY-5'];

describe.each(BACKENDS)('exports in flight on %s', (backend) => {
  const skip = backend === 'postgres' && !hasPostgres;
  let testDb: TestDatabase;
  let service: LoopbackServer;

  beforeAll(async () => {
    if (skip) return;
    testDb = await createTestDatabase(backend);
    service = await startServer(answering(ACCEPTED));
    await insertOrders(
      testDb.database,
      ORDERS.map((id) => ({ id, amount: 1000n, status: 'paid' as const, createdAt: at(-86_400_000) })),
    );
  });
  afterAll(async () => {
    await service?.close();
    await testDb?.drop();
  });

  function deps(now: Date, scheduled: Date[] = [], identifiers = ['FLY']): NightlyDependencies {
    return {
      database: testDb.database,
      accounts: identifiers.map((identifier) => ({
        identifier,
        client: createPaymentClient({
          baseUrl: service.baseUrl,
          identifier,
          secret: 's',
          timeoutMs: 2_000,
          retry: { attempts: 1, baseDelayMs: 10 },
        }),
      })),
      // One ORDERID a batch: five batches, two of them in flight at most.
      nightly: { ...loadConfig({}).nightly, exportBatchSize: 1, exportInFlight: 2 },
      reconcile: loadConfig({}).reconcile,
      callbackBaseUrl: 'http://127.0.0.1:9/',
      now: () => now,
      scheduleAdvance: async (_id, when) => void scheduled.push(when!),
    };
  }
  const sent = (runId: string) =>
    testDb.database.db
      .selectFrom('recon.export_requests')
      .select('batch')
      .where('nightly_run_id', '=', runId)
      .where('sent_at', 'is not', null)
      .orderBy('batch')
      .execute()
      .then((rows) => rows.map((row) => row.batch));
  const moveBatch = (runId: string, batch: number, state: 'delivered' | 'ingested') =>
    testDb.database.db
      .updateTable('recon.export_requests')
      .set({ state })
      .where('nightly_run_id', '=', runId)
      .where('batch', '=', batch)
      .execute();

  it.skipIf(skip)(
    'sends the first requests up to the room, the next as each is ingested, and looks again a minute on',
    async () => {
      const { run } = await startNightlyRun(testDb.database.db, '2026-11-23', T0);
      const runId = run.nightlyRunId;
      const scheduled: Date[] = [];
      expect(await advanceNightlyRun(deps(T0, scheduled), runId)).toBe('waiting');
      expect(await sent(runId)).toEqual([1, 2]);
      expect(service.received).toHaveLength(2);
      // The unsent batches are looked at again once the requests in flight have waited their minute.
      expect(scheduled).toEqual([at(60_000)]);

      // Batch 1 delivered and ingested: room for batch 3. Batch 2 delivered and not ingested still holds its place.
      await moveBatch(runId, 1, 'ingested');
      await moveBatch(runId, 2, 'delivered');
      const afterIngest = { ...deps(at(1_000)), log: silentLogger };
      await sendUnsentRequests(afterIngest, runId, () => at(1_000));
      expect(await sent(runId)).toEqual([1, 2, 3]);
      await sendUnsentRequests(afterIngest, runId, () => at(2_000));
      expect(await sent(runId)).toEqual([1, 2, 3]);

      // A minute after it was sent, batch 3's request, still undelivered, gives its place to batch 4; batch 2,
      // delivered, keeps its place until it is ingested.
      await advanceNightlyRun(deps(at(61_000)), runId);
      expect(await sent(runId)).toEqual([1, 2, 3, 4]);
      expect(service.received.map((request) => request.params['ORDERID'])).toEqual(ORDERS.slice(0, 4));
    },
  );

  it.skipIf(skip)(
    'with a timeout under a minute, looks again within the timeout: a request sent after an ingest meanwhile is asked again at its deadline',
    async () => {
      const { run } = await startNightlyRun(testDb.database.db, '2026-11-25', T0);
      const runId = run.nightlyRunId;
      const timeout = (now: Date, scheduled: Date[] = []) => {
        const base = deps(now, scheduled);
        return { ...base, nightly: { ...base.nightly, exportTimeoutSeconds: 5, exportAttempts: 3 } };
      };
      const scheduled: Date[] = [];
      expect(await advanceNightlyRun(timeout(T0, scheduled), runId)).toBe('waiting');
      expect(await sent(runId)).toEqual([1, 2]);
      expect(scheduled).toEqual([at(5_000)]);
      // At that look, both in flight are delivered and wait for their ingest: the unsent batches are due a timeout on.
      await moveBatch(runId, 1, 'delivered');
      await moveBatch(runId, 2, 'delivered');
      const atFirstLook: Date[] = [];
      await advanceNightlyRun(timeout(at(5_000), atFirstLook), runId);
      expect(atFirstLook).toEqual([at(10_000)]);
      // Batch 1 ingested: batch 3 sent at 6 s, and its delivery lost. The next look schedules its deadline.
      await moveBatch(runId, 1, 'ingested');
      await sendUnsentRequests({ ...timeout(at(6_000)), log: silentLogger }, runId, () => at(6_000));
      expect(await sent(runId)).toEqual([1, 2, 3]);
      const atSecondLook: Date[] = [];
      await advanceNightlyRun(timeout(at(10_000), atSecondLook), runId);
      expect(atSecondLook).toEqual([at(11_000)]);
      const before = service.received.length;
      await advanceNightlyRun(timeout(at(11_000)), runId);
      expect(service.received.slice(before).map((request) => request.params['ORDERID'])).toEqual([ORDERS[2]]);
    },
  );

  it.skipIf(skip)('counts the requests in flight across accounts, not per account', async () => {
    const { run } = await startNightlyRun(testDb.database.db, '2026-11-24', T0);
    const runId = run.nightlyRunId;
    const before = service.received.length;
    // Two accounts, five batches each, interleaved: room for two requests in all, one of each account.
    expect(await advanceNightlyRun(deps(T0, [], ['FLY-A', 'FLY-B']), runId)).toBe('waiting');
    expect(await sent(runId)).toEqual([1, 2]);
    expect(service.received.slice(before).map((request) => request.params['IDENTIFIER'])).toEqual(['FLY-A', 'FLY-B']);
    await moveBatch(runId, 2, 'ingested');
    await sendUnsentRequests({ ...deps(at(1_000), [], ['FLY-A', 'FLY-B']), log: silentLogger }, runId, () => at(1_000));
    expect(await sent(runId)).toEqual([1, 2, 3]);
    expect(service.received.slice(before).map((request) => request.params['IDENTIFIER'])).toEqual([
      'FLY-A',
      'FLY-B',
      'FLY-A',
    ]);
  });
});
