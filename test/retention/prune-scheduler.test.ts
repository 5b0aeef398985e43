import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../src/db/database.ts';
import { openDatabase } from '../../src/db/open-database.ts';
import { createLogger } from '../../src/log/create-logger.ts';
import type { PruneRunsStep } from '../../src/retention/prune.ts';
import { startPruneScheduler, type PruneScheduler } from '../../src/retention/prune-scheduler.ts';
import { memoryStream } from '../log/memory-stream.ts';
import { parseLogRecords } from '../support/log-records.ts';
import { BACKENDS, createTestDatabase, hasPostgres, type TestDatabase } from '../support/test-database.ts';
import { waitUntil } from '../support/wait-until.ts';
import { exportFile, startDeliveredFiles, storedChunks, type DeliveredFiles } from './delivered-files.ts';

const DAY = 86_400_000;
const RETENTION = { deliveryDays: 90, failedDeliveryDays: 30, runDays: 800 };
/** A check that node-cron never fires while a test runs: the tests look with checkNow(), or set their own. */
const NEVER = '0 0 1 1 *';
const ZONE = 'Europe/Paris';
const NOTHING = { runs: 0, verdictVersions: 0, runTotals: 0, scopeOrders: 0 };

/**
 * recon serve's daily prune, driven by a clock of the test's own: the first check of a day prunes and claims the
 * day, whichever process makes it; later checks that day find it done; a failed or stopped prune is taken up by the
 * next check.
 */
describe.each(BACKENDS)('the daily prune on %s', (backend) => {
  const skip = backend === 'postgres' && !hasPostgres;
  let testDb: TestDatabase;
  let files: DeliveredFiles;
  /** The schedulers' clock: 10:00 in Paris, on a day each test moves on. */
  let clock = new Date('2027-03-01T09:00:00Z');
  const schedulers: PruneScheduler[] = [];

  beforeAll(async () => {
    if (skip) return;
    testDb = await createTestDatabase(backend);
    files = await startDeliveredFiles(testDb.database);
  });
  afterAll(async () => {
    for (const scheduler of schedulers) await scheduler.stop();
    await files?.close();
    await testDb?.drop();
  });

  /** A delivery ingested 120 days before the clock: the next prune deletes its bytes. */
  const dueDelivery = async (id: string) => {
    const deliveryId = await files.deliverAndIngest(exportFile(id));
    const long = new Date(clock.getTime() - 120 * DAY);
    await files.age(deliveryId, { receivedAt: long, finishedAt: long });
    return deliveryId;
  };
  const nextDay = () => {
    clock = new Date(clock.getTime() + DAY);
    return clock.toISOString().slice(0, 10);
  };
  const prunesOf = (day: string) =>
    testDb.database.db
      .selectFrom('recon.prunes')
      .select(['prune_id', 'started_by', 'finished_at', 'failure', 'removed'])
      .where('day', '=', sql<Date>`${day}::date`)
      .execute();

  function start(
    options: { database?: Database; pruneRuns?: PruneRunsStep; checkSchedule?: string } = {},
  ): PruneScheduler & { records: () => ReturnType<typeof parseLogRecords> } {
    const stream = memoryStream();
    const scheduler = startPruneScheduler((options.database ?? testDb.database).db, {
      retention: RETENTION,
      timezone: ZONE,
      now: () => clock,
      checkSchedule: options.checkSchedule ?? NEVER,
      log: createLogger({ level: 'info', stream, name: 'recon serve' }),
      ...(options.pruneRuns ? { steps: { pruneRuns: options.pruneRuns } } : {}),
    });
    schedulers.push(scheduler);
    return { ...scheduler, records: () => parseLogRecords(stream.text()) };
  }

  it.skipIf(skip)(
    'prunes at its first check of the day, claims the day, and says what it removed; later checks find it done',
    async () => {
      const day = nextDay();
      const due = await dueDelivery('T-DAY-1');
      const bytes = (await storedChunks(testDb.database, due)).bytes;
      const scheduler = start();
      // The check at start, then one more.
      expect(await scheduler.checkNow()).toEqual({ kind: 'not-due', day });
      expect((await storedChunks(testDb.database, due)).chunks).toBe(0);
      const [row] = await prunesOf(day);
      expect(await prunesOf(day)).toHaveLength(1);
      expect(row).toMatchObject({ started_by: 'schedule', finished_at: clock, failure: null });
      expect(row!.removed).toMatchObject({ dryRun: false, deliveries: { deliveries: 1, bytes }, runs: NOTHING });
      expect(scheduler.records()).toEqual([
        expect.objectContaining({
          level: 'info',
          msg: `pruned the bytes of 1 delivery (${bytes} bytes) and of 0 failed deliveries (0 bytes), and 0 runs`,
          prune: row!.prune_id,
          day,
          deliveries: 1,
          bytes,
          failedDeliveries: 0,
          failedBytes: 0,
          runs: 0,
          seconds: expect.any(Number),
        }),
      ]);
      await scheduler.stop();
    },
  );

  it.skipIf(skip)('another recon serve checking the same day prunes nothing; the next day it does', async () => {
    const day = clock.toISOString().slice(0, 10);
    // On PostgreSQL another process's own connections; PGlite has one database handle per process.
    const other =
      backend === 'postgres'
        ? await openDatabase({ databaseUrl: testDb.env.DATABASE_URL, dataDir: '/nonexistent' })
        : testDb.database;
    try {
      const due = await dueDelivery('T-DAY-2');
      const scheduler = start({ database: other });
      expect(await scheduler.checkNow()).toEqual({ kind: 'not-due', day });
      expect((await storedChunks(testDb.database, due)).chunks).toBe(1);
      expect(await prunesOf(day)).toHaveLength(1);

      const tomorrow = nextDay();
      const outcome = await scheduler.checkNow();
      expect(outcome).toMatchObject({ kind: 'pruned', day: tomorrow, report: { deliveries: { deliveries: 1 } } });
      expect((await storedChunks(testDb.database, due)).chunks).toBe(0);
      expect(await prunesOf(tomorrow)).toEqual([expect.objectContaining({ finished_at: clock, failure: null })]);
      await scheduler.stop();
    } finally {
      if (other !== testDb.database) await other.close();
    }
  });

  it.skipIf(skip)(
    'gives the run step its cutoff and batch size; a failed prune is recorded, logged, and taken up by the next check',
    async () => {
      const day = nextDay();
      const due = await dueDelivery('T-DAY-3');
      const calls: Parameters<PruneRunsStep>[1][] = [];
      const pruneRuns: PruneRunsStep = async (_db, options) => {
        calls.push(options);
        if (calls.length === 1) throw new Error('the run step broke');
        return { runs: 2, verdictVersions: 5, runTotals: 3, scopeOrders: 1 };
      };
      const scheduler = start({ pruneRuns });
      const retried = await scheduler.checkNow();
      expect(retried).toMatchObject({ kind: 'pruned', day, report: { runs: { runs: 2, verdictVersions: 5 } } });
      expect(calls).toEqual([
        {
          cutoff: new Date(clock.getTime() - 800 * DAY),
          dryRun: false,
          batchSize: 100,
          signal: expect.any(AbortSignal),
        },
        {
          cutoff: new Date(clock.getTime() - 800 * DAY),
          dryRun: false,
          batchSize: 100,
          signal: expect.any(AbortSignal),
        },
      ]);
      // The failed attempt had pruned the delivery's bytes already: they stay pruned, and the retry finds none.
      expect((await storedChunks(testDb.database, due)).chunks).toBe(0);
      expect(retried).toMatchObject({ report: { deliveries: { deliveries: 0 } } });
      expect(await prunesOf(day)).toEqual([expect.objectContaining({ finished_at: clock, failure: null })]);
      expect(scheduler.records().map((record) => [record.level, record.msg])).toEqual([
        ['error', 'prune failed: the run step broke'],
        ['info', 'pruned the bytes of 0 deliveries (0 bytes) and of 0 failed deliveries (0 bytes), and 2 runs'],
      ]);
      await scheduler.stop();
    },
  );

  it.skipIf(skip)(
    'stopping cuts a prune in progress, records why, and the next check of the day carries on',
    async () => {
      const day = nextDay();
      let entered = false;
      const pruneRuns: PruneRunsStep = (_db, options) =>
        new Promise((_resolve, reject) => {
          entered = true;
          options.signal?.addEventListener('abort', () => reject(options.signal!.reason as Error));
        });
      const stopped = start({ pruneRuns });
      await waitUntil('the prune in its run step', () => entered);
      await stopped.stop();
      expect(await prunesOf(day)).toEqual([
        expect.objectContaining({ finished_at: null, failure: 'recon serve is stopping' }),
      ]);
      expect(stopped.records()).toEqual([
        expect.objectContaining({ level: 'warn', msg: 'prune stopped: recon serve is stopping', day }),
      ]);
      const next = start();
      expect(await next.checkNow()).toEqual({ kind: 'not-due', day });
      expect(await prunesOf(day)).toEqual([expect.objectContaining({ finished_at: clock, failure: null })]);
      await next.stop();
    },
  );

  it.skipIf(skip)('node-cron fires its checks on their schedule', async () => {
    // Every second (node-cron's seconds field), so that the test need not wait for an hour.
    const scheduler = start({ checkSchedule: '* * * * * *' });
    const tomorrow = nextDay();
    await waitUntil('a check on the new day', async () => (await prunesOf(tomorrow)).some((row) => row.finished_at));
    await scheduler.stop();
  });
});
