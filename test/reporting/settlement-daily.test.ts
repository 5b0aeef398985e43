import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKENDS, createTestDatabase, hasPostgres, type TestDatabase } from '../support/test-database.ts';
import { BIG, readView, seedReporting } from './reporting-seed.ts';

describe.each(BACKENDS)('reporting.settlement_daily on %s', (backend) => {
  const skip = backend === 'postgres' && !hasPostgres;
  let testDb: TestDatabase;
  beforeAll(async () => {
    if (skip) return;
    testDb = await createTestDatabase(backend);
    const seed = await seedReporting(testDb.database);
    // Besides the seed's payments (T1 with fees at 23:35Z, T2, T4, T6): a refund, an authorization (fees, no money
    // moved), a refused refund (with a fee), a yen capture half an hour before midnight in Paris, and a payment in dinars.
    const transaction = (id: string, line: number, fields: Record<string, string>) => ({
      transaction_id: id,
      identifier: 'merchant',
      extra: '{}',
      file_id: seed.fileA,
      line,
      updated_at: '2026-03-03T06:00:02Z',
      exec_code: '0000',
      ...fields,
    });
    await testDb.database.db
      .insertInto('recon.transactions')
      .values([
        transaction('R1', 10, {
          operation_type: 'refund',
          occurred_at: '2026-03-02T10:00:00Z',
          amount_minor: '300',
          currency: 'EUR',
          fees_minor: '10',
        }),
        transaction('A1', 11, {
          operation_type: 'authorization',
          occurred_at: '2026-03-02T11:00:00Z',
          amount_minor: '5000',
          currency: 'EUR',
          fees_minor: '5',
        }),
        transaction('R2', 12, {
          operation_type: 'refund',
          occurred_at: '2026-03-02T12:00:00Z',
          amount_minor: '999',
          currency: 'EUR',
          exec_code: '0005',
          // Whether the service charges a refused attempt is unknown: a fee it writes is counted, no money moved.
          fees_minor: '7',
        }),
        transaction('C1', 13, {
          operation_type: ' Capture ',
          occurred_at: '2026-03-02T23:30:00Z',
          amount_minor: '1500',
          currency: 'JPY',
          fees_minor: '20',
        }),
        transaction('K1', 14, {
          operation_type: 'payment',
          occurred_at: '2026-03-02T12:00:00Z',
          amount_minor: '1234',
          currency: 'KWD',
          fees_minor: '1',
        }),
      ])
      .execute();
  });
  afterAll(async () => testDb?.drop());

  const readIn = (zone: string | null) =>
    testDb.database.transaction(async (c) => {
      if (zone) await c.query(`SET LOCAL recon.report_timezone = '${zone}'`);
      const rows = await readView(c, 'settlement_daily');
      return rows.map((r) => [
        r.day,
        r.time_zone,
        r.currency,
        r.transactions,
        r.payments,
        r.refunds,
        r.paid_minor,
        r.refunded_minor,
        r.fees_minor,
        r.net_minor,
        r.paid,
        r.refunded,
        r.fees,
        r.net,
      ]);
    });

  it.skipIf(skip)(
    'sums succeeded transactions and every fee per UTC day and currency: paid - refunded - fees = net',
    async () => {
      expect(await readIn(null)).toEqual([
        [
          '2026-03-01',
          'UTC',
          'EUR',
          3,
          3,
          0,
          (BIG + 1700n).toString(),
          '0',
          '25',
          (BIG + 1675n).toString(),
          '90071992547426.93',
          '0.00',
          '0.25',
          '90071992547426.68',
        ],
        ['2026-03-02', 'UTC', 'EUR', 3, 1, 1, '400', '300', '22', '78', '4.00', '3.00', '0.22', '0.78'],
        ['2026-03-02', 'UTC', 'JPY', 1, 1, 0, '1500', '0', '20', '1480', '1500', '0', '20', '1480'],
        ['2026-03-02', 'UTC', 'KWD', 1, 1, 0, '1234', '0', '1', '1233', '1.234', '0.000', '0.001', '1.233'],
      ]);
    },
  );

  it.skipIf(skip)("takes its days in the session's recon.report_timezone", async () => {
    // In Paris T1 (23:35Z) and C1 (23:30Z) fall on the next day.
    expect(await readIn('Europe/Paris')).toEqual([
      [
        '2026-03-01',
        'Europe/Paris',
        'EUR',
        2,
        2,
        0,
        (BIG + 700n).toString(),
        '0',
        '0',
        (BIG + 700n).toString(),
        '90071992547416.93',
        '0.00',
        '0.00',
        '90071992547416.93',
      ],
      ['2026-03-02', 'Europe/Paris', 'EUR', 4, 2, 1, '1400', '300', '47', '1053', '14.00', '3.00', '0.47', '10.53'],
      ['2026-03-02', 'Europe/Paris', 'KWD', 1, 1, 0, '1234', '0', '1', '1233', '1.234', '0.000', '0.001', '1.233'],
      ['2026-03-03', 'Europe/Paris', 'JPY', 1, 1, 0, '1500', '0', '20', '1480', '1500', '0', '20', '1480'],
    ]);
  });

  it.skipIf(skip)(
    'gives a transaction the day reporting.report_today gives its instant, whatever the session zone',
    async () => {
      const { rows } = await testDb.database.transaction(async (c) => {
        // In New York, C1 (23:30Z) is still 2 March; in Paris, the report's zone, it is 3 March.
        await c.query("SET LOCAL TIME ZONE 'America/New_York'");
        await c.query("SET LOCAL recon.report_timezone = 'Europe/Paris'");
        return c.query<{ day: string; report_today: string; session_day: string }>(
          `SELECT s.day::text AS day, reporting.report_today(timestamptz '2026-03-02 23:30:00Z')::text AS report_today,
             (timestamptz '2026-03-02 23:30:00Z')::date::text AS session_day
           FROM reporting.settlement_daily s WHERE s.currency = 'JPY'`,
        );
      });
      expect(rows).toEqual([{ day: '2026-03-03', report_today: '2026-03-03', session_day: '2026-03-02' }]);
    },
  );
});

describe.each(BACKENDS)('reporting.settlement_daily across daylight saving time on %s', (backend) => {
  const skip = backend === 'postgres' && !hasPostgres;
  let testDb: TestDatabase;
  beforeAll(async () => {
    if (skip) return;
    testDb = await createTestDatabase(backend);
    const seed = await seedReporting(testDb.database);
    // Half an hour after midnight in Paris, on each side of the two changes of 2026 (29 March, 25 October): an
    // offset fixed at +1 or +2 would put one of each pair on the wrong day.
    const payment = (id: string, line: number, occurredAt: string) => ({
      transaction_id: id,
      identifier: 'merchant',
      extra: '{}',
      file_id: seed.fileA,
      line,
      updated_at: '2026-11-01T00:00:00Z',
      exec_code: '0000',
      operation_type: 'payment',
      occurred_at: occurredAt,
      amount_minor: '100',
      currency: 'EUR',
    });
    await testDb.database.db
      .insertInto('recon.transactions')
      .values([
        payment('DST-1', 20, '2026-03-28T23:30:00Z'),
        payment('DST-2', 21, '2026-03-29T22:30:00Z'),
        payment('DST-3', 22, '2026-10-24T22:30:00Z'),
        payment('DST-4', 23, '2026-10-25T22:30:00Z'),
      ])
      .execute();
  });
  afterAll(async () => testDb?.drop());

  const daysIn = (zone: string) =>
    testDb.database.transaction(async (c) => {
      await c.query(`SET LOCAL recon.report_timezone = '${zone}'`);
      const rows = await readView(c, 'settlement_daily');
      return rows.filter((r) => (r.day as string) >= '2026-03-28').map((r) => [r.day, r.payments, r.paid_minor]);
    });

  it.skipIf(skip)("dates each transaction by the zone's offset of that instant", async () => {
    expect(await daysIn('Europe/Paris')).toEqual([
      ['2026-03-29', 1, '100'],
      ['2026-03-30', 1, '100'],
      ['2026-10-25', 2, '200'],
    ]);
    expect(await daysIn('UTC')).toEqual([
      ['2026-03-28', 1, '100'],
      ['2026-03-29', 1, '100'],
      ['2026-10-24', 1, '100'],
      ['2026-10-25', 1, '100'],
    ]);
  });
});
