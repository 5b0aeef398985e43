import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CURRENCIES } from '@recon/protocol';
import { minorToDecimal } from '../../src/report/money-format.ts';
import { BACKENDS, createTestDatabase, hasPostgres, type TestDatabase } from '../support/test-database.ts';

describe.each(BACKENDS)('recon.format_money on %s', (backend) => {
  const skip = backend === 'postgres' && !hasPostgres;
  let testDb: TestDatabase;
  beforeAll(async () => {
    if (!skip) testDb = await createTestDatabase(backend);
  });
  afterAll(async () => {
    await testDb?.drop();
  });

  it.skipIf(skip)('writes every ISO 4217 currency with the exponent recon uses everywhere else', async () => {
    const codes = CURRENCIES.map(([code]) => code);
    for (const amount of ['123456789', '-5', '0', '9223372036854775807', '-9223372036854775808']) {
      const { rows } = await sql<{
        code: string;
        text: string;
      }>`SELECT code, recon.format_money(${amount}::bigint, code) AS text
        FROM unnest(${codes}::text[]) AS code`.execute(testDb.database.db);
      expect(rows).toEqual(codes.map((code) => ({ code, text: `${minorToDecimal(amount, code)} ${code}` })));
    }
  });

  it.skipIf(skip)('writes two decimals and no code when the currency is unknown or missing', async () => {
    const { rows } = await sql<{
      a: string;
      b: string;
    }>`SELECT recon.format_money(-1234, NULL) AS a, recon.format_money(7, '') AS b`.execute(testDb.database.db);
    expect(rows[0]).toEqual({ a: '-12.34', b: '0.07' });
  });
});
