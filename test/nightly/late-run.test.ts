import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findLateRuns } from '../../src/nightly/late-run.ts';
import { BACKENDS, createTestDatabase, hasPostgres, type TestDatabase } from '../support/test-database.ts';

/** Slots at 02:30 in Paris: 00:30 UTC in summer. */
const rule = { schedule: '30 2 * * *', timezone: 'Europe/Paris', lateHours: 6 };
const WEEK_MS = 7 * 86_400_000;

describe.each(BACKENDS)('late nightly runs on %s', (backend) => {
  const skip = backend === 'postgres' && !hasPostgres;
  let testDb: TestDatabase;
  beforeAll(async () => {
    if (!skip) testDb = await createTestDatabase(backend);
  });
  afterAll(async () => testDb?.drop());

  const lateAt = (iso: string) => {
    const now = new Date(iso);
    return findLateRuns(testDb.database.db, rule, now, new Date(now.getTime() - WEEK_MS));
  };
  const insertRun = (runDate: string, state: 'waiting' | 'reconciled' | 'failed', startedAt: string) =>
    testDb.database.db
      .insertInto('recon.nightly_runs')
      .values({ run_date: runDate, as_of: new Date(startedAt), state, started_at: new Date(startedAt) })
      .returning('nightly_run_id')
      .executeTakeFirstOrThrow();

  it.skipIf(skip)(
    'are the slots past lateHours with no run once recon has made one, and the runs unfinished lateHours after their slot',
    async () => {
      // A new install: no run before the slot, so none is missing.
      expect(await lateAt('2026-06-12T06:31:00Z')).toEqual([]);
      await insertRun('2026-06-11', 'reconciled', '2026-06-11T00:30:00Z');
      expect(await lateAt('2026-06-12T06:29:00Z')).toEqual([]);
      expect(await lateAt('2026-06-12T06:31:00Z')).toEqual([
        { runDate: '2026-06-12', dueFrom: new Date('2026-06-12T00:30:00Z') },
      ]);

      const { nightly_run_id } = await insertRun('2026-06-12', 'waiting', '2026-06-12T00:30:00Z');
      expect(await lateAt('2026-06-12T06:29:00Z')).toEqual([]);
      expect(await lateAt('2026-06-12T06:31:00Z')).toEqual([
        { runDate: '2026-06-12', dueFrom: new Date('2026-06-12T00:30:00Z'), nightlyRunId: String(nightly_run_id) },
      ]);
      for (const state of ['reconciled', 'failed'] as const) {
        await testDb.database.db
          .updateTable('recon.nightly_runs')
          .set({ state })
          .where('nightly_run_id', '=', nightly_run_id)
          .execute();
        expect(await lateAt('2026-06-12T09:00:00Z')).toEqual([]);
      }
    },
  );

  it.skipIf(skip)('count a run started by hand after its slot from its start', async () => {
    const { nightly_run_id } = await insertRun('2026-06-13', 'waiting', '2026-06-13T03:00:00Z');
    expect(await lateAt('2026-06-13T08:59:00Z')).toEqual([]);
    expect(await lateAt('2026-06-13T09:01:00Z')).toEqual([
      { runDate: '2026-06-13', dueFrom: new Date('2026-06-13T03:00:00Z'), nightlyRunId: String(nightly_run_id) },
    ]);
  });
});
