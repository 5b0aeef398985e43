import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPaymentClient } from '../../src/client/payment-client.ts';
import { loadConfig } from '../../src/config/config.ts';
import type { Database } from '../../src/db/database.ts';
import { openDatabase } from '../../src/db/open-database.ts';
import { advanceNightlyRun } from '../../src/nightly/advance-nightly-run.ts';
import { startNightlyRun } from '../../src/nightly/nightly-run.ts';
import { RECONCILE_LOCK } from '../../src/reconcile/reconcile-lock.ts';
import { answering, startServer, type LoopbackServer } from '../client/loopback-servers.ts';
import { insertOrders } from '../reconcile/reconcile-scenario.ts';
import { startTcpProxy, type TcpProxy } from '../support/tcp-proxy.ts';
import { createTestDatabase, hasPostgres, type TestDatabase } from '../support/test-database.ts';
import { waitUntil } from '../support/wait-until.ts';

/**
 * The connections to the server lost while a nightly run reconciles, and refused for a moment after: the run must
 * be handed back as soon as the server answers again, not left `reconciling` until its lease ends ten minutes
 * later (a seed of the simulator found it so). PostgreSQL only: PGlite has no connection to lose.
 */
const T0 = new Date('2026-11-23T02:30:00Z');
const REFUSED = { EXECCODE: '1003', MESSAGE: 'Invalid HASH', OPERATIONTYPE: 'getTransactions' };

describe.skipIf(!hasPostgres)('a nightly run whose connections are lost while it reconciles (PostgreSQL)', () => {
  let testDb: TestDatabase;
  let proxy: TcpProxy;
  let proxied: Database;
  let service: LoopbackServer;
  let holder: pg.Client;

  beforeAll(async () => {
    testDb = await createTestDatabase('postgres');
    const url = new URL(testDb.env.DATABASE_URL!);
    proxy = await startTcpProxy({ host: url.hostname, port: Number(url.port || 5432) });
    proxied = await openDatabase({ databaseUrl: proxy.through(testDb.env.DATABASE_URL!), dataDir: '' });
    // A service that refuses the export for good: the run goes straight on to reconcile its orders without it.
    service = await startServer(answering(REFUSED));
    holder = new pg.Client({ connectionString: testDb.env.DATABASE_URL });
    await holder.connect();
    await insertOrders(testDb.database, [
      { id: 'LOST-1', amount: 1000n, status: 'paid', createdAt: new Date(T0.getTime() - 86_400_000) },
    ]);
  });
  afterAll(async () => {
    await holder?.end();
    await service?.close();
    await proxied?.close();
    await proxy?.close();
    await testDb?.drop();
  });

  const deps = (database: Database) => ({
    database,
    accounts: [
      {
        identifier: 'LOST',
        client: createPaymentClient({
          baseUrl: service.baseUrl,
          identifier: 'LOST',
          secret: 's',
          timeoutMs: 30_000,
          retry: { attempts: 1, baseDelayMs: 10 },
        }),
      },
    ],
    nightly: { ...loadConfig({}).nightly, exportAttempts: 1 },
    reconcile: loadConfig({}).reconcile,
    callbackBaseUrl: 'http://127.0.0.1:9/',
    now: () => T0,
    scheduleAdvance: async () => {},
  });
  const stateOf = async (nightlyRunId: string) =>
    testDb.database.db
      .selectFrom('recon.nightly_runs')
      .select(['state', 'failure'])
      .where('nightly_run_id', '=', nightlyRunId)
      .executeTakeFirstOrThrow();

  it('hands the run back once the server answers again, and the next advance reconciles it', async () => {
    const { run } = await startNightlyRun(testDb.database.db, '2026-11-23', T0);
    // The reconciliation waits for the lock this connection holds: the connections are lost while it is inside.
    await holder.query('SELECT pg_advisory_lock($1::bigint)', [RECONCILE_LOCK]);
    const advancing = advanceNightlyRun(deps(proxied), run.nightlyRunId).then(
      () => 'advanced',
      (error: unknown) => `failed: ${(error as Error).message}`,
    );
    await waitUntil('the reconciliation to wait for the lock', async () => {
      const waiting = await holder.query(
        `SELECT 1 FROM pg_stat_activity WHERE datname = current_database() AND wait_event = 'advisory'`,
      );
      return waiting.rowCount === 1;
    });
    expect((await stateOf(run.nightlyRunId)).state).toBe('reconciling');

    proxy.refuse();
    // The reconciliation has failed, and the claim's hand-back met a refused connection at least once.
    await waitUntil('a connection refused after the loss', () => proxy.refused >= 1);
    await proxy.restore();
    expect(await advancing).toMatch(/^failed: /);
    await holder.query('SELECT pg_advisory_unlock($1::bigint)', [RECONCILE_LOCK]);
    expect(await stateOf(run.nightlyRunId)).toEqual({ state: 'waiting', failure: expect.any(String) });

    expect(await advanceNightlyRun(deps(proxied), run.nightlyRunId)).toBe('failed');
    const reconciled = await testDb.database.db
      .selectFrom('recon.nightly_runs')
      .select('reconciliation_run_id')
      .where('nightly_run_id', '=', run.nightlyRunId)
      .executeTakeFirstOrThrow();
    expect(reconciled.reconciliation_run_id).not.toBeNull();
  });
});
