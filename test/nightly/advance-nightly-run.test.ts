import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPaymentClient } from '../../src/client/payment-client.ts';
import { loadConfig } from '../../src/config/config.ts';
import { advanceNightlyRun, type NightlyDependencies } from '../../src/nightly/advance-nightly-run.ts';
import { startNightlyRun } from '../../src/nightly/nightly-run.ts';
import { answering, startServer, type LoopbackServer } from '../client/loopback-servers.ts';
import { insertOrders } from '../reconcile/reconcile-scenario.ts';
import { refusingBaseUrl } from '../support/loopback.ts';
import { BACKENDS, createTestDatabase, hasPostgres, type TestDatabase } from '../support/test-database.ts';

/**
 * The nightly run's state machine driven step by step with its clock in hand, against real loopback servers that
 * answer as the service may: accepted, refused for good, never reached, or silent after taking the request.
 */
const T0 = new Date('2026-11-23T02:30:00Z');
const MINUTE = 60_000;
const at = (ms: number) => new Date(T0.getTime() + ms);
const ACCEPTED = { EXECCODE: '0000', MESSAGE: 'The export will be sent', OPERATIONTYPE: 'getTransactions' };
const REFUSED = { EXECCODE: '1003', MESSAGE: 'Invalid HASH', OPERATIONTYPE: 'getTransactions' };

describe.each(BACKENDS)('advancing a nightly run on %s', (backend) => {
  const skip = backend === 'postgres' && !hasPostgres;
  let testDb: TestDatabase;
  const servers: LoopbackServer[] = [];
  let day = 0;

  beforeAll(async () => {
    if (skip) return;
    testDb = await createTestDatabase(backend);
    await insertOrders(testDb.database, [
      { id: 'ADV-1', amount: 1000n, status: 'paid', createdAt: at(-2 * 24 * 60 * MINUTE) },
    ]);
  });
  afterAll(async () => {
    for (const server of servers) await server.close();
    await testDb?.drop();
  });

  async function service(behaviour: Parameters<typeof startServer>[0]): Promise<LoopbackServer> {
    const server = await startServer(behaviour);
    servers.push(server);
    return server;
  }

  /** A run of its own date, and the dependencies of one advance at `now` with the service at `baseUrl`. */
  async function newRun() {
    const { run } = await startNightlyRun(testDb.database.db, `2026-12-${String(++day).padStart(2, '0')}`, T0);
    return run.nightlyRunId;
  }
  /**
   * `timeoutMs` is short only where the service never answers; a service that answers gets the default, so that a
   * loaded machine never turns its answer into a timeout.
   */
  function deps(baseUrl: string, now: Date, scheduled: Date[] = [], timeoutMs = 30_000): NightlyDependencies {
    return {
      database: testDb.database,
      accounts: [
        {
          identifier: 'ADV',
          client: createPaymentClient({
            baseUrl,
            identifier: 'ADV',
            secret: 's',
            timeoutMs,
            retry: { attempts: 1, baseDelayMs: 10 },
          }),
        },
      ],
      nightly: { ...loadConfig({}).nightly, exportTimeoutSeconds: 600, exportAttempts: 2 },
      reconcile: loadConfig({}).reconcile,
      callbackBaseUrl: 'http://127.0.0.1:9/',
      now: () => now,
      scheduleAdvance: async (_id, when) => void scheduled.push(when!),
    };
  }
  const requestsOf = (nightlyRunId: string) =>
    testDb.database.db
      .selectFrom('recon.export_requests')
      .select(['attempt', 'state', 'sent_at', 'retry_at', 'failure'])
      .where('nightly_run_id', '=', nightlyRunId)
      .orderBy('attempt')
      .execute();

  it.skipIf(skip)(
    'gives a batch up when the service refuses the request for good, and the run fails saying why',
    async () => {
      const refusing = await service(answering(REFUSED));
      const runId = await newRun();
      expect(await advanceNightlyRun(deps(refusing.baseUrl, T0), runId)).toBe('failed');
      expect(refusing.received).toHaveLength(1);
      expect(await requestsOf(runId)).toEqual([
        expect.objectContaining({ attempt: 1, state: 'given_up', failure: expect.stringContaining('EXECCODE 1003') }),
      ]);
      const run = await testDb.database.db
        .selectFrom('recon.nightly_runs')
        .select('failure')
        .where('nightly_run_id', '=', runId)
        .executeTakeFirstOrThrow();
      expect(run.failure).toMatch(
        /^1 export batch\(es\) given up, their orders reconciled without them: batch 1 \(getTransactions answered EXECCODE 1003/,
      );
    },
  );

  it.skipIf(skip)('sends again a minute on a request that never reached the service, not before', async () => {
    const { baseUrl: nowhere } = await refusingBaseUrl();
    const accepting = await service(answering(ACCEPTED));
    const runId = await newRun();
    const scheduled: Date[] = [];
    expect(await advanceNightlyRun(deps(nowhere, T0, scheduled), runId)).toBe('waiting');
    expect(await requestsOf(runId)).toEqual([
      expect.objectContaining({ state: 'requested', sent_at: null, retry_at: at(MINUTE) }),
    ]);
    expect(scheduled).toEqual([at(MINUTE)]);

    await advanceNightlyRun(deps(accepting.baseUrl, at(30_000)), runId);
    expect(accepting.received).toHaveLength(0);
    await advanceNightlyRun(deps(accepting.baseUrl, at(MINUTE)), runId);
    expect(accepting.received).toHaveLength(1);
    expect(await requestsOf(runId)).toEqual([
      expect.objectContaining({ state: 'requested', sent_at: at(MINUTE), failure: null }),
    ]);
  });

  it.skipIf(skip)(
    'never repeats a request that timed out after sending: the export timeout asks again, with a new token',
    async () => {
      const silent = await service(() => 'hang');
      const runId = await newRun();
      await advanceNightlyRun(deps(silent.baseUrl, T0, [], 300), runId);
      await advanceNightlyRun(deps(silent.baseUrl, at(MINUTE), [], 300), runId);
      expect(silent.received).toHaveLength(1);
      expect(await requestsOf(runId)).toEqual([
        expect.objectContaining({
          attempt: 1,
          state: 'requested',
          sent_at: T0,
          failure: expect.stringContaining('it may have reached the service'),
        }),
      ]);

      // Past the export timeout (600 s): a second request, which the service is sent.
      await advanceNightlyRun(deps(silent.baseUrl, at(11 * MINUTE), [], 300), runId);
      expect(silent.received).toHaveLength(2);
      expect(silent.received[1]!.params['CALLBACKURL']).not.toBe(silent.received[0]!.params['CALLBACKURL']);
      expect((await requestsOf(runId)).map((r) => [r.attempt, r.state])).toEqual([
        [1, 'timed_out'],
        [2, 'requested'],
      ]);
    },
  );

  it.skipIf(skip)('schedules one advance for a deadline however many advances see it', async () => {
    const accepting = await service(answering(ACCEPTED));
    const runId = await newRun();
    const scheduled: Date[] = [];
    for (let i = 0; i < 3; i++) await advanceNightlyRun(deps(accepting.baseUrl, at(i * 1000), scheduled), runId);
    // The export deadline: the first send plus RECON_EXPORT_TIMEOUT_SECONDS.
    expect(scheduled).toEqual([at(10 * MINUTE)]);
    // Once it has come, the advance then running asks again and schedules the new request's deadline.
    await advanceNightlyRun(deps(accepting.baseUrl, at(10 * MINUTE), scheduled), runId);
    expect(scheduled).toEqual([at(10 * MINUTE), at(20 * MINUTE)]);
  });

  it.skipIf(skip)(
    'leaves a run being reconciled to its reconciler until the lease ends, then takes it over',
    async () => {
      const accepting = await service(answering(ACCEPTED));
      const runId = await newRun();
      await testDb.database.db
        .updateTable('recon.nightly_runs')
        .set({ state: 'reconciling', batches: 0, orders: 0, updated_at: T0 })
        .where('nightly_run_id', '=', runId)
        .execute();
      const scheduled: Date[] = [];
      expect(await advanceNightlyRun(deps(accepting.baseUrl, at(MINUTE), scheduled), runId)).toBe('reconciling');
      expect(scheduled).toEqual([at(10 * MINUTE)]);
      expect(await advanceNightlyRun(deps(accepting.baseUrl, at(11 * MINUTE)), runId)).toBe('reconciled');
    },
  );
});
