import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { reconcile, type RunSummary } from '../../src/reconcile/reconcile.ts';
import { loadRunReport, oldestOpenExceptionsPerStatus } from '../../src/report/report-queries.ts';
import { DAY, ingestTransactions } from '../reconcile/reconcile-scenario.ts';
import { BACKENDS, createTestDatabase, hasPostgres, type TestDatabase } from '../support/test-database.ts';
import { AS_OF, FORMULA_ID, SCRIPT_ID, twoRuns, UNKNOWN_ID } from './report-scenario.ts';

/**
 * The report's money: the bridge by status, the money moved on the run's days in the report's zone, the open
 * exceptions' money at risk and age. On both backends, over the real runs of report-scenario.ts.
 */
describe.each(BACKENDS)('money in report queries on %s', (backend) => {
  const skip = backend === 'postgres' && !hasPostgres;
  let testDb: TestDatabase;
  let tmp: string;
  let runs: { first: RunSummary; second: RunSummary };
  beforeAll(async () => {
    if (skip) return;
    testDb = await createTestDatabase(backend);
    tmp = await mkdtemp(path.join(os.tmpdir(), 'recon-report-money-'));
    runs = await twoRuns(testDb.database, tmp);
  });
  afterAll(async () => {
    await testDb?.drop();
    if (tmp) await rm(tmp, { recursive: true, force: true });
  });

  it.skipIf(skip)("breaks each currency's difference down by status, the parts adding up to the bridge", async () => {
    const report = await loadRunReport(testDb.database.db, runs.second.runId);
    for (const bridge of report.bridge) {
      const parts = report.statusTotals.filter((part) => part.currency === bridge.currency);
      const sum = (pick: (part: (typeof parts)[number]) => string) =>
        parts.reduce((total, part) => total + BigInt(pick(part)), 0n).toString();
      expect(sum((part) => part.expectedMinor)).toBe(bridge.expectedMinor);
      expect(sum((part) => part.settledMinor)).toBe(bridge.settledMinor);
      expect(sum((part) => part.differenceMinor)).toBe(
        (BigInt(bridge.settledMinor) - BigInt(bridge.expectedMinor)).toString(),
      );
      expect(parts.reduce((total, part) => total + part.verdicts, 0)).toBe(bridge.orders + bridge.unknownOrders);
    }
    // EUR's -98.00 is no longer one number: an amount_mismatch, two missing payments, a pending order, an unknown one.
    expect(
      report.statusTotals
        .filter((part) => part.currency === 'EUR')
        .map((part) => [part.status, part.verdicts, part.differenceMinor]),
    ).toEqual([
      ['amount_mismatch', 1, '-1000'],
      ['matched', 7, '0'],
      ['missing_at_provider', 2, '-4300'],
      ['pending', 1, '-5000'],
      ['unknown_order', 1, '500'],
    ]);
    expect(report.statusTotals.find((part) => part.currency === 'KWD' && part.status === 'duplicate_payment')).toEqual({
      currency: 'KWD',
      status: 'duplicate_payment',
      verdicts: 1,
      expectedMinor: '1000',
      settledMinor: '2000',
      differenceMinor: '1000',
      atRiskMinor: '1000',
      atRiskUnknown: 0,
    });
  });

  it.skipIf(skip)(
    "moves the money of the run's days, dated in the report's zone, with fees and refunds, and leaves the session's zone alone",
    async () => {
      const { db } = testDb.database;
      // TM-1 was paid 2026-11-10 13:00 UTC; a refund of it comes 21:00 UTC the same day, past midnight at UTC+14.
      await ingestTransactions(testDb.database, tmp, [
        {
          id: 'TR-1',
          orderId: 'M-1',
          type: 'refund',
          amount: '30.00',
          exec: '0000',
          at: new Date('2026-11-10T21:00:00Z'),
        },
      ]);
      await sql`UPDATE recon.transactions SET fees_minor = CASE transaction_id WHEN 'TM-1' THEN 250 ELSE 40 END
        WHERE transaction_id IN ('TM-1', 'TR-1')`.execute(db);

      // A refused attempt with a fee, before the run's first day: money moved, but not on the run's days.
      await ingestTransactions(testDb.database, tmp, [
        {
          id: 'TE-1',
          orderId: 'EARLY-1',
          type: 'payment',
          amount: '5.00',
          exec: '0001',
          fees: '0.10',
          at: new Date('2026-11-01T09:00:00Z'),
        },
      ]);
      const { rows: early } = await sql<{ day: string }>`SELECT day::text AS day FROM reporting.settlement_daily
        WHERE day = DATE '2026-11-01'`.execute(db);
      expect(early).toEqual([{ day: '2026-11-01' }]);

      const utc = await loadRunReport(db, runs.second.runId);
      expect(utc.timeZone).toBe('UTC');
      expect(utc.moneyMoved.window).toEqual({ from: '2026-11-10', to: '2026-11-20' });
      expect(utc.moneyMoved.days.map((day) => day.day).sort()[0]).toBe('2026-11-10');
      expect(utc.moneyMoved.days.filter((day) => day.day === '2026-11-10')).toEqual([
        {
          day: '2026-11-10',
          currency: 'EUR',
          transactions: 2,
          payments: 1,
          refunds: 1,
          paidMinor: '10000',
          refundedMinor: '3000',
          feesMinor: '290',
          netMinor: '6710',
        },
      ]);
      expect(new Set(utc.moneyMoved.days.map((day) => day.currency))).toEqual(new Set(['EUR', 'JPY', 'KWD']));

      const kiritimati = await loadRunReport(db, runs.second.runId, { timeZone: 'Pacific/Kiritimati' });
      // Orders created at noon UTC are created at 02:00 the next day at UTC+14: the whole window moves a day.
      expect(kiritimati.moneyMoved.window).toEqual({ from: '2026-11-11', to: '2026-11-21' });
      expect(kiritimati.verdictGroups.map((group) => group.day).sort()[0]).toBe('2026-11-11');
      expect(
        kiritimati.moneyMoved.days
          .filter((day) => day.day <= '2026-11-12' && day.currency === 'EUR')
          .map((day) => [day.day, day.paidMinor, day.refundedMinor, day.feesMinor, day.netMinor]),
      ).toEqual([
        ['2026-11-11', '10000', '3000', '290', '6710'],
        ['2026-11-12', '20000', '0', '0', '20000'],
      ]);
      // The zone was set for the report's own transaction only.
      const { rows } = await sql<{
        zone: string | null;
      }>`SELECT current_setting('recon.report_timezone', true) AS zone`.execute(db);
      expect(rows[0]!.zone ?? '').toBe('');
    },
  );

  it.skipIf(skip)(
    "ages a run's exceptions from their order's creation to the run's as_of, and reads the same after later runs",
    async () => {
      const { db } = testDb.database;
      const before = await loadRunReport(db, runs.second.runId);
      expect(before.ageing).toEqual([
        {
          status: 'amount_mismatch',
          acknowledged: false,
          currency: 'EUR',
          orderAgeBucket: '8-30 days',
          exceptions: 1,
          atRiskMinor: '1000',
          atRiskUnknown: 0,
        },
        {
          status: 'duplicate_payment',
          acknowledged: false,
          currency: 'KWD',
          orderAgeBucket: '0-3 days',
          exceptions: 1,
          atRiskMinor: '1000',
          atRiskUnknown: 0,
        },
        {
          status: 'missing_at_provider',
          acknowledged: false,
          currency: 'EUR',
          orderAgeBucket: '0-3 days',
          exceptions: 2,
          atRiskMinor: '4300',
          atRiskUnknown: 0,
        },
        {
          status: 'unknown_order',
          acknowledged: false,
          currency: 'EUR',
          orderAgeBucket: 'no order',
          exceptions: 1,
          atRiskMinor: '500',
          atRiskUnknown: 0,
        },
      ]);
      const listed = await oldestOpenExceptionsPerStatus(db, runs.second.runId, 1);
      expect(listed.map((exception) => [exception.status, exception.atRiskMinor, exception.orderAgeDays])).toEqual([
        ['amount_mismatch', '1000', 8],
        ['duplicate_payment', '1000', 2],
        ['missing_at_provider', SCRIPT_ID < FORMULA_ID ? '4200' : '100', 1],
        ['unknown_order', '500', null],
      ]);
      expect(listed.find((exception) => exception.status === 'unknown_order')!.orderId).toBe(UNKNOWN_ID);

      const later = await reconcile(testDb.database, {
        scope: { kind: 'all' },
        toleranceMinor: 0n,
        graceHours: 24,
        asOf: new Date(AS_OF.getTime() + 40 * DAY),
      });
      // Forty days on, A-1 is over 30 days old, and M-1 with it (the refund above made it a mismatch).
      expect(
        (await loadRunReport(db, later.runId)).ageing.find((cell) => cell.status === 'amount_mismatch'),
      ).toMatchObject({ orderAgeBucket: 'over 30 days', exceptions: 2 });
      expect(await loadRunReport(db, runs.second.runId)).toEqual(before);
    },
  );
});
