import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrate, migrationsDir } from '../../src/db/migrate.ts';
import type { VerdictStatus } from '../../src/db/schema.ts';
import { BACKENDS, createTestDatabaseBefore, hasPostgres, type TestDatabase } from '../support/test-database.ts';
import { readView } from '../reporting/reporting-seed.ts';

const MIGRATION = '0033_stored_for_reading.sql';

const DAY = 86_400_000;

/**
 * One exception per rule, with the figures a run stores, on orders of every age bucket, written before migration
 * 0033: the views derived the money at risk from each explanation's figures when read. The migration writes it
 * into each version by the same rule, and a finished run's bridge per status, so that the views read the same.
 */
const CASES = [
  // status, order age in days, currency, expected, settled, delta, figures (authorized, paid, refunded), at risk
  ['capture_at_risk', 1, 'EUR', 0, 0, 0, [5000, 0, 0], '5000'],
  ['capture_expired', 5, 'EUR', 0, 0, 0, [7000, 0, 0], '7000'],
  ['approval_expired', 10, 'EUR', 4000, 0, -4000, [0, 0, 0], '4000'],
  ['missing_at_provider', 40, 'EUR', 2500, 0, -2500, [0, 0, 0], '2500'],
  ['amount_mismatch', 2, 'JPY', 1500, 1200, -300, [0, 1200, 0], '300'],
  ['status_mismatch', 6, 'EUR', 0, 999, 999, [0, 999, 0], '999'],
  ['over_refunded', 20, 'KWD', 1000, -234, -1234, [0, 1000, 1234], '234'],
  ['duplicate_payment', 45, 'KWD', 1234, 2468, 1234, [0, 2468, 0], '1234'],
] as const;

describe.each(BACKENDS)('migration 0033 on exceptions of %s written before it', (backend) => {
  const skip = backend === 'postgres' && !hasPostgres;
  let testDb: TestDatabase;
  beforeAll(async () => {
    if (skip) return;
    testDb = await createTestDatabaseBefore(backend, MIGRATION);
    const db = testDb.database.db;
    // Half a day past each whole age: the bucket is the same at any hour the test runs.
    const now = Date.now();
    const { import_id } = await db
      .insertInto('recon.order_imports')
      .values({ source: 'file', name: 'orders.csv', status: 'loaded', started_at: new Date(now) })
      .returning('import_id')
      .executeTakeFirstOrThrow();
    await db
      .insertInto('recon.orders')
      .values(
        CASES.map(([status, age, currency, expected]) => ({
          order_id: status,
          amount_minor: String(expected),
          currency,
          status: 'paid' as const,
          refunded_minor: '0',
          payment_method: 'wallet' as const,
          created_at: new Date(now - age * DAY - DAY / 2),
          updated_at: new Date(now),
          import_id,
        })),
      )
      .execute();
    const asOf = new Date(now - DAY / 2);
    const { run_id } = await db
      .insertInto('recon.reconciliation_runs')
      .values({
        as_of: asOf,
        scope: '{"kind":"all"}',
        description: 'all orders and unknown ORDERIDs',
        tolerance_minor: '0',
        grace_hours: 24,
        started_at: asOf,
        finished_at: asOf,
        orders_in_scope: CASES.length + 4,
        counts: '{}',
      })
      .returning('run_id')
      .executeTakeFirstOrThrow();
    const verdict = (
      order_id: string,
      status: VerdictStatus,
      currency: string,
      amounts: readonly number[],
      figures: object | null,
    ) => ({
      run_id,
      order_id,
      known_order: status !== 'unknown_order',
      status,
      lifecycle: 'new' as const,
      first_seen_run_id: run_id,
      first_seen_at: asOf,
      expected_minor: String(amounts[0]),
      settled_minor: String(amounts[1]),
      delta_minor: String(amounts[2]),
      currency,
      transaction_ids: [],
      warnings: null,
      explanation: JSON.stringify({ rule: status, reason: `${status} in words`, ...(figures && { figures }) }),
    });
    await db
      .insertInto('recon.verdicts')
      .values([
        ...CASES.map(([status, , currency, expected, settled, delta, [authorized, paid, refunded]]) =>
          verdict(status, status, currency, [expected, settled, delta], {
            authorized: String(authorized),
            paid: String(paid),
            refunded: String(refunded),
          }),
        ),
        verdict('UNK-1', 'unknown_order', 'EUR', [0, 700, 700], { authorized: '0', paid: '700', refunded: '0' }),
        // Written without figures: what is at risk is unknown, not 0.
        verdict('NOFIG', 'capture_expired', 'EUR', [0, 0, 0], null),
        // Authorized orders expect no settled money: their whole amount is at risk when the service has no
        // authorization, or never approved it.
        verdict('AUTH-MISSING', 'missing_at_provider', 'EUR', [0, 0, 0], { authorized: '0', paid: '0', refunded: '0' }),
        verdict('AUTH-UNAPPROVED', 'approval_expired', 'EUR', [0, 0, 0], {
          authorized: '0',
          paid: '0',
          refunded: '0',
        }),
      ])
      .execute();
    const authorizedOrder = (order_id: string, amount: string, age: number) => ({
      order_id,
      amount_minor: amount,
      currency: 'EUR',
      status: 'authorized' as const,
      refunded_minor: '0',
      payment_method: 'instalment' as const,
      created_at: new Date(now - age * DAY - DAY / 2),
      updated_at: new Date(now),
      import_id,
    });
    await db
      .insertInto('recon.orders')
      .values([
        authorizedOrder('NOFIG', '100', 50),
        authorizedOrder('AUTH-MISSING', '18000', 2),
        authorizedOrder('AUTH-UNAPPROVED', '45000', 2),
      ])
      .execute();
    expect(await migrate(testDb.database, { migrationsDir: migrationsDir() })).toContain(MIGRATION);
  });
  afterAll(async () => {
    await testDb?.drop();
  });

  const read = (view: string, orderBy = '') => testDb.database.transaction((c) => readView(c, view, orderBy));

  it.skipIf(skip)('gives each exception the money it puts at risk, by the rule of its status', async () => {
    const rows = await read('exceptions', 'order_id');
    const byId = new Map(rows.map((r) => [r.order_id, r]));
    for (const [status, age, , , , , , atRisk] of CASES)
      expect(byId.get(status), status).toMatchObject({
        status,
        at_risk_minor: atRisk,
        order_age_days: age,
        reason: `${status} in words`,
      });
    expect(byId.get('over_refunded')).toMatchObject({ at_risk: '0.234' });
    expect(byId.get('amount_mismatch')).toMatchObject({ at_risk: '300' });
    expect(byId.get('capture_at_risk')).toMatchObject({ at_risk: '50.00' });
    expect(byId.get('UNK-1')).toMatchObject({ at_risk_minor: '700', at_risk: '7.00', order_age_days: null });
    expect(byId.get('NOFIG')).toMatchObject({ at_risk_minor: null, at_risk: null, order_age_days: 50 });
    expect(byId.get('AUTH-MISSING')).toMatchObject({ at_risk_minor: '18000', at_risk: '180.00' });
    expect(byId.get('AUTH-UNAPPROVED')).toMatchObject({ at_risk_minor: '45000', at_risk: '450.00' });
    expect(byId.get('AUTH-MISSING')!.open_days).toBe(byId.get('AUTH-MISSING')!.age_days);
  });

  it.skipIf(skip)(
    "writes the run's bridge per status, with the money at risk of the verdicts that know it",
    async () => {
      const rows = await read('run_status_totals', 'status');
      expect(rows.find((r) => r.status === 'capture_expired')).toMatchObject({
        currency: 'EUR',
        verdicts: 2,
        at_risk_minor: '7000',
        at_risk_unknown: 1,
      });
      expect(rows.find((r) => r.status === 'missing_at_provider')).toMatchObject({
        verdicts: 2,
        expected_minor: '2500',
        at_risk_minor: '20500',
        at_risk_unknown: 0,
      });
      expect(rows.reduce((sum, r) => sum + (r.verdicts as number), 0)).toBe(CASES.length + 4);
    },
  );

  it.skipIf(skip)('ages the open exceptions by their order in buckets, counted and with their money', async () => {
    const rows = await read('exception_ageing');
    expect(
      rows.map((r) => [
        r.status,
        r.currency,
        r.order_age_bucket,
        r.min_order_age_days,
        r.max_order_age_days,
        r.exceptions,
        r.at_risk_minor,
        r.at_risk,
        r.at_risk_unknown,
      ]),
    ).toEqual([
      ['amount_mismatch', 'JPY', '0-3 days', 0, 3, 1, '300', '300', 0],
      ['approval_expired', 'EUR', '0-3 days', 0, 3, 1, '45000', '450.00', 0],
      ['approval_expired', 'EUR', '8-30 days', 8, 30, 1, '4000', '40.00', 0],
      ['capture_at_risk', 'EUR', '0-3 days', 0, 3, 1, '5000', '50.00', 0],
      ['capture_expired', 'EUR', '4-7 days', 4, 7, 1, '7000', '70.00', 0],
      ['capture_expired', 'EUR', 'over 30 days', 31, null, 1, null, null, 1],
      ['duplicate_payment', 'KWD', 'over 30 days', 31, null, 1, '1234', '1.234', 0],
      ['missing_at_provider', 'EUR', '0-3 days', 0, 3, 1, '18000', '180.00', 0],
      ['missing_at_provider', 'EUR', 'over 30 days', 31, null, 1, '2500', '25.00', 0],
      ['over_refunded', 'KWD', '8-30 days', 8, 30, 1, '234', '0.234', 0],
      ['status_mismatch', 'EUR', '4-7 days', 4, 7, 1, '999', '9.99', 0],
      ['unknown_order', 'EUR', 'no order', null, null, 1, '700', '7.00', 0],
    ]);
  });
});
