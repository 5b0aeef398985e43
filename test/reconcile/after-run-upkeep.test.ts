import { sql } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { reconcile } from '../../src/reconcile/reconcile.ts';
import { BACKENDS, createTestDatabase, hasPostgres, type TestDatabase } from '../support/test-database.ts';
import { ago, DAY, insertOrders } from './reconcile-scenario.ts';

const AS_OF = new Date('2026-11-20T12:00:00Z');

/**
 * Where no autovacuum runs (PGlite; a PostgreSQL server or table with it off), a run leaves the verdicts analyzed,
 * as autovacuum would have: the accountants' questions are otherwise planned for an empty table.
 */
describe.each(BACKENDS)('the verdicts after a run on %s', (backend) => {
  const skip = backend === 'postgres' && !hasPostgres;
  let testDb: TestDatabase | undefined;
  afterEach(async () => {
    await testDb?.drop();
    testDb = undefined;
  });

  const analyzedRows = async (db: TestDatabase) =>
    (
      await sql<{ rows: number }>`SELECT reltuples::float8 AS rows FROM pg_class
        WHERE oid = 'recon.verdicts'::regclass`.execute(db.database.db)
    ).rows[0]!.rows;

  it.skipIf(skip)('are analyzed when autovacuum does not run', async () => {
    testDb = await createTestDatabase(backend);
    if (backend === 'postgres') {
      await sql`ALTER TABLE recon.verdicts SET (autovacuum_enabled = false)`.execute(testDb.database.db);
    }
    const createdAt = ago(AS_OF, 3 * DAY);
    await insertOrders(
      testDb.database,
      Array.from({ length: 120 }, (_, index) => ({
        id: `UPKEEP-${index}`,
        amount: 1000n,
        status: 'paid' as const,
        method: 'wallet' as const,
        createdAt,
      })),
    );
    expect(await analyzedRows(testDb)).toBeLessThanOrEqual(0);
    await reconcile(testDb.database, { scope: { kind: 'all' }, asOf: AS_OF, toleranceMinor: 0n, graceHours: 24 });
    expect(await analyzedRows(testDb)).toBe(120);
  });
});
