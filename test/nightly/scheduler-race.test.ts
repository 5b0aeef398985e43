import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../src/db/database.ts';
import { openDatabase } from '../../src/db/open-database.ts';
import { startNightlyScheduler } from '../../src/nightly/nightly-scheduler.ts';
import { QUEUES } from '../../src/queue/job-queue.ts';
import { startRecon } from '../cli/run-recon.ts';
import { holdTransaction, lockWaiters, withApplicationName } from '../support/held-transaction.ts';
import { createTestDatabase, hasPostgres, type TestDatabase } from '../support/test-database.ts';
import { waitUntil } from '../support/wait-until.ts';

/**
 * One schedule slot makes one nightly run however many processes fire for it. PostgreSQL only: a race needs
 * several sessions at once, which embedded PGlite (one connection in one process) cannot have. The race is forced,
 * not hoped for: the test holds the slot's row in an open transaction, so every contender's insert waits on it,
 * and lets go only once pg_stat_activity shows them all waiting.
 */
describe.skipIf(!hasPostgres)('schedulers racing for one slot (PostgreSQL only)', () => {
  let testDb: TestDatabase;
  let databaseUrl: string;

  beforeAll(async () => {
    testDb = await createTestDatabase('postgres');
    databaseUrl = testDb.env.DATABASE_URL!;
  });
  afterAll(async () => {
    await testDb?.drop();
  });

  /** Holds `runDate`'s row, uncommitted, until released. */
  const holdSlot = (runDate: string) =>
    holdTransaction(databaseUrl, [`INSERT INTO recon.nightly_runs (run_date, as_of) VALUES ('${runDate}', now())`]);

  const runsOf = async (runDate: string) =>
    (
      await sql<{
        nightly_run_id: string;
      }>`SELECT nightly_run_id::text FROM recon.nightly_runs WHERE run_date = ${runDate}::date`.execute(
        testDb.database.db,
      )
    ).rows;

  const waitingOn = async (prefix: string) =>
    (await lockWaiters(testDb.database.db)).filter((waiter) => waiter.applicationName.startsWith(prefix));

  it('two node-cron schedulers, each on its own database handle, firing for the same slot make one run, created once', async () => {
    const slot = new Date('2026-11-25T02:30:00Z');
    const held = await holdSlot('2026-11-25');
    const handles: Database[] = [];
    const schedulers: { stop: () => Promise<void> }[] = [];
    const created: string[] = [];
    const errors: unknown[] = [];
    // How often each scheduler's ticks have read the clock: a tick reads it before it asks for the run.
    const ticks = [0, 0];
    try {
      for (const index of [0, 1]) {
        const handle = await openDatabase({
          databaseUrl: withApplicationName(databaseUrl, `scheduler-${index}`),
          dataDir: '/nonexistent',
        });
        handles.push(handle);
        schedulers.push(
          startNightlyScheduler(handle.db, {
            // Every second: node-cron's optional seconds field, so the test need not wait for a minute.
            schedule: '* * * * * *',
            timezone: 'UTC',
            now: () => {
              ticks[index]!++;
              return slot;
            },
            onRunCreated: async (nightlyRunId) => {
              created.push(nightlyRunId);
            },
            onError: (error) => errors.push(error),
          }),
        );
      }
      const waiting = await waitUntil('both schedulers waiting on the slot', async () => {
        const found = await waitingOn('scheduler-');
        return found.length === 2 && found;
      });
      expect(waiting.map((waiter) => waiter.applicationName).sort()).toEqual(['scheduler-0', 'scheduler-1']);
      for (const waiter of waiting) expect(waiter.query).toMatch(/^insert into "recon"\."nightly_runs"/);
      await held.release();
      // noOverlap: a scheduler ticks again only once its previous tick is done, the run created or attached to.
      const ticksAtRelease = [...ticks];
      await waitUntil('a later tick of each scheduler', () =>
        ticks.every((count, index) => count > ticksAtRelease[index]!),
      );
    } finally {
      for (const scheduler of schedulers) await scheduler.stop();
      for (const handle of handles) await handle.close();
      await held.release();
    }
    expect(errors).toEqual([]);
    const runs = await runsOf('2026-11-25');
    expect(runs).toHaveLength(1);
    expect(created).toEqual([runs[0]!.nightly_run_id]);
  });

  it('recon nightly twice at once, as two processes: one starts the run, the other attaches to it', async () => {
    const held = await holdSlot('2026-11-26');
    let results;
    try {
      const processes = [0, 1].map((index) =>
        startRecon(['nightly', '--date', '2026-11-26', '--json'], {
          ...testDb.env,
          DATABASE_URL: withApplicationName(databaseUrl, `nightly-${index}`),
        }),
      );
      await waitUntil('both recon nightly waiting on the slot', async () => (await waitingOn('nightly-')).length === 2);
      await held.release();
      results = await Promise.all(processes.map((recon) => recon.done));
    } finally {
      await held.release();
    }
    expect(results.map((result) => result.code)).toEqual([0, 0]);
    const [run] = await runsOf('2026-11-26');
    expect(await runsOf('2026-11-26')).toHaveLength(1);
    const said = results.map((result) => result.stderr).sort();
    expect(said).toEqual([
      `recon nightly: attached to the run of 2026-11-26 (run ${run!.nightly_run_id})\n`,
      `recon nightly: started the run of 2026-11-26 (run ${run!.nightly_run_id})\n`,
    ]);
    for (const result of results)
      expect(JSON.parse(result.stdout)).toMatchObject({ nightlyRunId: run!.nightly_run_id, runDate: '2026-11-26' });
    // Only the process that created the run set it going.
    const { rows: jobs } = await sql<{ count: number }>`SELECT count(*)::integer AS count FROM recon_queue.job
      WHERE name = ${QUEUES.advanceNightlyRun} AND data->>'nightlyRunId' = ${run!.nightly_run_id}`.execute(
      testDb.database.db,
    );
    expect(jobs[0]!.count).toBe(1);
  });
});
