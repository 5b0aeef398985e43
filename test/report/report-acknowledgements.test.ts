import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { reconcile, type RunSummary } from '../../src/reconcile/reconcile.ts';
import { loadRunReport, oldestOpenExceptionsPerStatus } from '../../src/report/report-queries.ts';
import { HOUR, ingestTransactions } from '../reconcile/reconcile-scenario.ts';
import { BACKENDS, createTestDatabase, hasPostgres, type TestDatabase } from '../support/test-database.ts';
import { AS_OF, twoRuns } from './report-scenario.ts';

/**
 * A report shows the exceptions acknowledged before its run finished apart from the new ones, with the last note;
 * an acknowledgement given later shows in the next run's report, and a past run's report never changes.
 */
describe.each(BACKENDS)('acknowledged exceptions in a report on %s', (backend) => {
  const skip = backend === 'postgres' && !hasPostgres;
  let testDb: TestDatabase;
  let tmp: string;
  let runs: { first: RunSummary; second: RunSummary };
  beforeAll(async () => {
    if (skip) return;
    testDb = await createTestDatabase(backend);
    tmp = await mkdtemp(path.join(os.tmpdir(), 'recon-report-ack-'));
    runs = await twoRuns(testDb.database, tmp);
  });
  afterAll(async () => {
    await testDb?.drop();
    if (tmp) await rm(tmp, { recursive: true, force: true });
  });

  const settings = { scope: { kind: 'all' } as const, toleranceMinor: 0n, graceHours: 24 };

  it.skipIf(skip)(
    'counts and lists an acknowledged exception apart from the next run on, and keeps past reports as they were',
    async () => {
      const { db } = testDb.database;
      const before = await loadRunReport(db, runs.second.runId);
      await sql`SELECT reporting.exception_action('A-1', 'ack', 'short by 10.00, asked the service', 'alice')`.execute(
        db,
      );
      await sql`SELECT reporting.exception_action('K-2', 'note', 'duplicate: refund requested', 'bob')`.execute(db);

      // Given after run 2 finished: run 2's report is unchanged.
      expect(await loadRunReport(db, runs.second.runId)).toEqual(before);
      expect(before.ageing.every((cell) => !cell.acknowledged)).toBe(true);

      const third = await reconcile(testDb.database, { ...settings, asOf: new Date(AS_OF.getTime() + HOUR) });
      const report = await loadRunReport(db, third.runId);
      expect(report.ageing.filter((cell) => cell.acknowledged)).toEqual([
        {
          status: 'amount_mismatch',
          acknowledged: true,
          currency: 'EUR',
          orderAgeBucket: '8-30 days',
          exceptions: 1,
          atRiskMinor: '1000',
          atRiskUnknown: 0,
        },
      ]);
      const listed = await oldestOpenExceptionsPerStatus(db, third.runId, 10);
      expect(listed.find((exception) => exception.orderId === 'A-1')).toMatchObject({
        acknowledged: true,
        acknowledgedBy: 'alice',
        lastNote: 'short by 10.00, asked the service',
        lastNoteBy: 'alice',
      });
      expect(listed.find((exception) => exception.orderId === 'A-1')!.acknowledgedAt).toBeInstanceOf(Date);
      // A note alone acknowledges nothing.
      expect(listed.find((exception) => exception.orderId === 'K-2')).toMatchObject({
        acknowledged: false,
        acknowledgedBy: null,
        lastNote: 'duplicate: refund requested',
        lastNoteBy: 'bob',
      });

      // The missing 10.00 arrives: A-1 is matched in the next run, and run 3's report stays as it was.
      const thirdReport = report;
      await ingestTransactions(testDb.database, tmp, [
        {
          id: 'TA-2',
          orderId: 'A-1',
          type: 'payment',
          amount: '10.00',
          exec: '0000',
          at: new Date(AS_OF.getTime() + HOUR),
        },
      ]);
      const fourth = await reconcile(testDb.database, { ...settings, asOf: new Date(AS_OF.getTime() + 2 * HOUR) });
      expect((await loadRunReport(db, fourth.runId)).ageing.some((cell) => cell.acknowledged)).toBe(false);
      const thirdAgain = await loadRunReport(db, third.runId);
      // Money moved reads the transactions as they are now: TA-2 falls on run 3's last day.
      expect({ ...thirdAgain, moneyMoved: null }).toEqual({ ...thirdReport, moneyMoved: null });
    },
  );
});
