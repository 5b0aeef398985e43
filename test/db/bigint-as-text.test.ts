import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKENDS, createTestDatabase, hasPostgres, type TestDatabase } from '../support/test-database.ts';

describe.each(BACKENDS)('bigint and numeric on %s', (backend) => {
  const skip = backend === 'postgres' && !hasPostgres;
  let testDb: TestDatabase;
  beforeAll(async () => {
    if (!skip) testDb = await createTestDatabase(backend);
  });
  afterAll(async () => {
    await testDb?.drop();
  });

  it.skipIf(skip)('come back as exact digit strings, never as a rounded JS number', async () => {
    const { rows } = await sql<{ big: unknown; sum: unknown }>`SELECT 9007199254740993::bigint AS big,
      sum(x)::numeric AS sum FROM (VALUES (9223372036854775807::bigint), (1::bigint)) v (x)`.execute(
      testDb.database.db,
    );
    expect(rows[0]).toEqual({ big: '9007199254740993', sum: '9223372036854775808' });
  });
});
