import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { reconcile } from '../../src/reconcile/reconcile.ts';
import { DAY, insertOrders } from '../reconcile/reconcile-scenario.ts';
import { BACKENDS, createTestDatabase, hasPostgres, type TestDatabase } from '../support/test-database.ts';
import { readView } from './reporting-seed.ts';

/** What a spreadsheet (Excel, LibreOffice) reads as a day and a month: `4-7` becomes 4 July, `8-30` 30 August. */
const DATE_LIKE = /^\d{1,2}[-/.]\d{1,2}$/;

/**
 * The two ages of an open exception on a first install: recon saw every exception for the first time tonight, so
 * each has been open 0 days, while its order may be weeks old. Each age has its own name, and the ageing says which
 * one its buckets count.
 */
describe.each(BACKENDS)('the ages of an exception on %s', (backend) => {
  const skip = backend === 'postgres' && !hasPostgres;
  let testDb: TestDatabase;
  beforeAll(async () => {
    if (skip) return;
    testDb = await createTestDatabase(backend);
    // Half a day past the whole days, so that the seconds between here and the query never change a count.
    const now = Date.now();
    await insertOrders(testDb.database, [
      { id: 'ANCIENT', amount: 5000n, status: 'paid', createdAt: new Date(now - 40.5 * DAY) },
      { id: 'OLD', amount: 4000n, status: 'paid', createdAt: new Date(now - 10.5 * DAY) },
      { id: 'WEEK', amount: 3000n, status: 'paid', createdAt: new Date(now - 5.5 * DAY) },
      { id: 'NEW', amount: 2000n, status: 'paid', createdAt: new Date(now - 2.5 * DAY) },
    ]);
    // The first run ever: every exception is first seen now.
    await reconcile(testDb.database, {
      scope: { kind: 'all' },
      asOf: new Date(now),
      toleranceMinor: 0n,
      graceHours: 24,
    });
  });
  afterAll(async () => testDb?.drop());

  const read = (view: string, orderBy: string) => testDb.database.transaction((c) => readView(c, view, orderBy));

  it.skipIf(skip)(
    'reporting.exceptions: open_days since first seen, order_age_days since the order, age_days the deprecated open_days',
    async () => {
      const rows = await read('exceptions', 'order_id');
      expect(rows.map((r) => [r.order_id, r.status, r.open_days, r.order_age_days, r.age_days])).toEqual([
        ['ANCIENT', 'missing_at_provider', 0, 40, 0],
        ['NEW', 'missing_at_provider', 0, 2, 0],
        ['OLD', 'missing_at_provider', 0, 10, 0],
        ['WEEK', 'missing_at_provider', 0, 5, 0],
      ]);
    },
  );

  it.skipIf(skip)(
    'reporting.exception_ageing: buckets of the order age, named so, in words a spreadsheet keeps as text',
    async () => {
      // An expression, not the name: readView's columns are text, its ORDER BY would sort '31' before '4'.
      const rows = await read('exception_ageing', 'min_order_age_days + 0');
      expect(
        rows.map((r) => [r.order_age_bucket, r.min_order_age_days, r.max_order_age_days, r.exceptions, r.at_risk]),
      ).toEqual([
        ['0-3 days', 0, 3, 1, '20.00'],
        ['4-7 days', 4, 7, 1, '30.00'],
        ['8-30 days', 8, 30, 1, '40.00'],
        ['over 30 days', 31, null, 1, '50.00'],
      ]);
      for (const row of rows) expect(row.order_age_bucket).not.toMatch(DATE_LIKE);
    },
  );
});
