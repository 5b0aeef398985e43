import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startNightlyScheduler } from '../../src/nightly/nightly-scheduler.ts';
import { slotSkippedByClockChange } from '../../src/nightly/schedule-gap.ts';
import { BACKENDS, createTestDatabase, hasPostgres, type TestDatabase } from '../support/test-database.ts';
import { waitUntil } from '../support/wait-until.ts';

const PARIS = 'Europe/Paris';

it('finds the 02:30 slot the spring-forward gap skipped, within the hour after it', () => {
  // 2027-03-28: Europe/Paris jumps from 02:00 CET (01:00Z) to 03:00 CEST.
  expect(slotSkippedByClockChange('30 2 * * *', PARIS, new Date('2027-03-28T01:05:00Z'))).toBe('2027-03-28');
  expect(slotSkippedByClockChange('30 2 * * *', PARIS, new Date('2027-03-28T01:29:00Z'))).toBe('2027-03-28');
  // Before the gap, and more than an hour after the skipped slot's wall time.
  expect(slotSkippedByClockChange('30 2 * * *', PARIS, new Date('2027-03-28T00:59:00Z'))).toBeUndefined();
  expect(slotSkippedByClockChange('30 2 * * *', PARIS, new Date('2027-03-28T01:31:00Z'))).toBeUndefined();
});

it('finds nothing on a day whose slot exists, nor for a slot outside the gap, nor in a zone without one', () => {
  expect(slotSkippedByClockChange('30 2 * * *', PARIS, new Date('2026-11-23T01:45:00Z'))).toBeUndefined();
  expect(slotSkippedByClockChange('30 3 * * *', PARIS, new Date('2027-03-28T01:45:00Z'))).toBeUndefined();
  // The fall-back repeat (2026-10-25, 02:00-03:00 twice): the slot exists, node-cron fires it.
  expect(slotSkippedByClockChange('30 2 * * *', PARIS, new Date('2026-10-25T01:45:00Z'))).toBeUndefined();
  expect(slotSkippedByClockChange('30 2 * * *', 'UTC', new Date('2027-03-28T02:45:00Z'))).toBeUndefined();
  // America/New_York springs forward at 02:00 too (2027-03-14).
  expect(slotSkippedByClockChange('30 2 * * *', 'America/New_York', new Date('2027-03-14T07:10:00Z'))).toBe(
    '2027-03-14',
  );
});

describe.each(BACKENDS)('the scheduler on the spring-forward day, on %s', (backend) => {
  const skip = backend === 'postgres' && !hasPostgres;
  let testDb: TestDatabase;
  beforeAll(async () => {
    if (!skip) testDb = await createTestDatabase(backend);
  });
  afterAll(async () => testDb?.drop());

  it.skipIf(skip)('starts the run of the skipped 02:30 slot once, however often the gap check fires', async () => {
    const created: string[] = [];
    const errors: unknown[] = [];
    let clockReads = 0;
    // Its clock reads 03:10 CEST on 2027-03-28; the gap check fires every second instead of every 15 minutes.
    const scheduler = startNightlyScheduler(testDb.database.db, {
      schedule: '30 2 * * *',
      timezone: PARIS,
      now: () => {
        clockReads++;
        return new Date('2027-03-28T01:10:00Z');
      },
      gapCheckSchedule: '* * * * * *',
      onRunCreated: async (nightlyRunId) => void created.push(nightlyRunId),
      onError: (error) => errors.push(error),
    });
    try {
      await waitUntil('the skipped slot started', () => created.length === 1);
      // Later checks (each reads the clock) find the run there and start nothing.
      const readsThen = clockReads;
      await waitUntil('two more checks', () => clockReads >= readsThen + 2);
    } finally {
      await scheduler.stop();
    }
    expect(errors).toEqual([]);
    expect(created).toHaveLength(1);
    expect(await runsOn(testDb, '2027-03-28')).toHaveLength(1);
  });
});

async function runsOn(testDb: TestDatabase, date: string) {
  const rows = await testDb.database.db
    .selectFrom('recon.nightly_runs')
    .select('nightly_run_id')
    .where('run_date', '=', sql<Date>`${date}::date`)
    .execute();
  return rows.map((row) => String(row.nightly_run_id));
}
