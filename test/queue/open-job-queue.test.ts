import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../src/db/database.ts';
import { openDatabase } from '../../src/db/open-database.ts';
import { openJobQueue, QUEUE_INSTALL_LOCK, QUEUES } from '../../src/queue/job-queue.ts';
import { holdTransaction, lockWaiters, withApplicationName } from '../support/held-transaction.ts';
import { BACKENDS, createTestDatabase, hasPostgres, type TestDatabase } from '../support/test-database.ts';
import { waitUntil } from '../support/wait-until.ts';

describe.each(BACKENDS)('openJobQueue on %s', (backend) => {
  const skip = backend === 'postgres' && !hasPostgres;
  let testDb: TestDatabase;
  beforeAll(async () => {
    if (!skip) testDb = await createTestDatabase(backend);
  });
  afterAll(async () => {
    await testDb?.drop();
  });

  it.skipIf(skip)('sets the heartbeat asked for on queues made earlier with another', async () => {
    for (const heartbeatSeconds of [10, 25]) {
      const boss = await openJobQueue(testDb.database, { heartbeatSeconds });
      try {
        for (const name of Object.values(QUEUES))
          expect((await boss.getQueue(name))?.heartbeatSeconds).toBe(heartbeatSeconds);
      } finally {
        await boss.stop({ graceful: false, close: false });
      }
    }
  });
});

describe('openJobQueue on PGlite', () => {
  let testDb: TestDatabase;
  beforeAll(async () => {
    testDb = await createTestDatabase('pglite');
  });
  afterAll(async () => {
    await testDb?.drop();
  });

  it('rolls back a script that failed half-way: the one connection is not left in an aborted transaction', async () => {
    const boss = await openJobQueue(testDb.database, { heartbeatSeconds: 10 });
    try {
      await expect(
        boss.getDb().executeSql(`BEGIN; SELECT 1 FROM recon_queue.job; SELECT 1 / 0; COMMIT;`),
      ).rejects.toThrow(/division by zero/);
      // Every later statement, recon's own included, runs: nothing is left of the failed transaction.
      expect((await sql<{ one: number }>`SELECT 1 AS one`.execute(testDb.database.db)).rows).toEqual([{ one: 1 }]);
      const id = await boss.send(QUEUES.advanceNightlyRun, { nightlyRunId: '1' });
      expect((await boss.getJobById(QUEUES.advanceNightlyRun, id!))?.state).toBe('created');
    } finally {
      await boss.stop({ graceful: false, close: false });
    }
  });
});

/**
 * PostgreSQL only: it takes two sessions. Two processes starting together on a fresh database used to race to
 * install pg-boss's schema, and one failed now and then; the test holds the lock openJobQueue serializes on, sees
 * both processes wait for it before touching the queue's schema, then lets them go one after the other.
 */
describe.skipIf(!hasPostgres)(
  'two processes opening the job queue at once on a fresh database (PostgreSQL only)',
  () => {
    let testDb: TestDatabase;
    beforeAll(async () => {
      testDb = await createTestDatabase('postgres');
    });
    afterAll(async () => {
      await testDb?.drop();
    });

    it('both wait their turn before looking for the queue, then both open it', async () => {
      const databaseUrl = testDb.env.DATABASE_URL!;
      const held = await holdTransaction(databaseUrl, [`SELECT pg_advisory_xact_lock(${QUEUE_INSTALL_LOCK})`]);
      const handles: Database[] = [];
      try {
        for (const index of [0, 1])
          handles.push(
            await openDatabase({
              databaseUrl: withApplicationName(databaseUrl, `queue-${index}`),
              dataDir: '/nonexistent',
            }),
          );
        const opening = handles.map((handle) => openJobQueue(handle, { heartbeatSeconds: 10 }));
        await waitUntil(
          'both processes waiting for their turn',
          async () =>
            (await lockWaiters(testDb.database.db)).filter((waiter) => waiter.applicationName.startsWith('queue-'))
              .length === 2,
        );
        const { rows } = await sql<{
          schema: string | null;
        }>`SELECT to_regnamespace('recon_queue')::text AS schema`.execute(testDb.database.db);
        expect(rows[0]!.schema).toBeNull();
        await held.release();
        const opened = await Promise.allSettled(opening);
        expect(opened.map((result) => (result.status === 'rejected' ? String(result.reason) : 'opened'))).toEqual([
          'opened',
          'opened',
        ]);
        for (const result of opened)
          if (result.status === 'fulfilled') await result.value.stop({ graceful: false, close: false });
      } finally {
        await held.release();
        for (const handle of handles) await handle.close();
      }
    });
  },
);
