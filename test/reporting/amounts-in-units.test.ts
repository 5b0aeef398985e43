import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CURRENCIES } from '@recon/protocol';
import { minorToDecimal } from '../../src/report/money-format.ts';
import { BACKENDS, createTestDatabase, hasPostgres, type TestDatabase } from '../support/test-database.ts';
import { readView } from './reporting-seed.ts';

describe.each(BACKENDS)('amounts in the currency unit on %s', (backend) => {
  const skip = backend === 'postgres' && !hasPostgres;
  let testDb: TestDatabase;
  beforeAll(async () => {
    if (!skip) testDb = await createTestDatabase(backend);
  });
  afterAll(async () => {
    await testDb?.drop();
  });

  it.skipIf(skip)('recon.minor_to_unit follows the ISO 4217 exponent of every currency, exactly', async () => {
    const codes = CURRENCIES.map(([code]) => code);
    for (const amount of ['123456789', '-5', '0', '9223372036854775807', '-9223372036854775808']) {
      const { rows } = await sql<{ code: string; unit: string }>`
        SELECT code, recon.minor_to_unit(${amount}::bigint, code)::text AS unit
        FROM unnest(${codes}::text[]) AS code`.execute(testDb.database.db);
      expect(rows).toEqual(codes.map((code) => ({ code, unit: minorToDecimal(amount, code) })));
    }
    // As for export amounts without CURRENCY: two decimals when the code is missing or unknown.
    const { rows } = await sql<{ a: string; b: string; c: string | null }>`
      SELECT recon.minor_to_unit(-1234, NULL)::text AS a, recon.minor_to_unit(7, 'XYZ')::text AS b,
        recon.minor_to_unit(NULL, 'EUR')::text AS c`.execute(testDb.database.db);
    expect(rows[0]).toEqual({ a: '-12.34', b: '0.07', c: null });
  });

  it.skipIf(skip)('the views show 12.34 EUR, 1500 JPY and 1.234 KWD beside their minor units', async () => {
    const db = testDb.database.db;
    const { import_id } = await db
      .insertInto('recon.order_imports')
      .values({ source: 'file', name: 'orders.csv', status: 'loaded', started_at: '2026-03-02T05:00:00Z' })
      .returning('import_id')
      .executeTakeFirstOrThrow();
    const order = (order_id: string, currency: string, amount_minor: string, refunded_minor: string) => ({
      order_id,
      currency,
      amount_minor,
      refunded_minor,
      status: 'paid' as const,
      payment_method: 'wallet' as const,
      created_at: '2026-03-01T10:00:00Z',
      updated_at: '2026-03-01T10:00:00Z',
      import_id,
    });
    await db
      .insertInto('recon.orders')
      .values([
        order('EUR-1', 'EUR', '1234', '5'),
        order('JPY-1', 'JPY', '1500', '0'),
        order('KWD-1', 'KWD', '1234', '1'),
      ])
      .execute();
    const rows = await testDb.database.transaction((c) => readView(c, 'orders', 'order_id'));
    expect(rows.map((r) => [r.order_id, r.amount_minor, r.amount, r.refunded_minor, r.refunded])).toEqual([
      ['EUR-1', '1234', '12.34', '5', '0.05'],
      ['JPY-1', '1500', '1500', '0', '0'],
      ['KWD-1', '1234', '1.234', '1', '0.001'],
    ]);
  });

  it.skipIf(skip)('the views compute amounts in units inline, with no call of a function per row', async () => {
    const { rows } = await sql<{ 'QUERY PLAN': string }>`
      EXPLAIN (VERBOSE) SELECT expected, settled, delta, at_risk FROM reporting.exceptions`.execute(testDb.database.db);
    const plan = rows.map((row) => row['QUERY PLAN']).join('\n');
    expect(plan).toContain('delta_minor');
    expect(plan).not.toContain('minor_to_unit');
  });
});
