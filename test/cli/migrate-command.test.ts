import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKENDS, createTestDatabase, hasPostgres, type TestDatabase } from '../support/test-database.ts';
import { runRecon } from './run-recon.ts';

describe.each(BACKENDS)('recon migrate on %s', (backend) => {
  const skip = backend === 'postgres' && !hasPostgres;
  let testDb: TestDatabase;
  beforeAll(async () => {
    if (skip) return;
    testDb = await createTestDatabase(backend);
    // Back to a database that has never seen recon.
    await testDb.database.transaction((c) => c.exec('DROP SCHEMA recon CASCADE'));
    await testDb.close();
  });
  afterAll(async () => testDb?.drop());

  it.skipIf(skip)('applies the migrations of sql/migrations once, then finds the database up to date', async () => {
    expect(await runRecon(['migrate'], testDb.env)).toEqual({ code: 0, stdout: 'applied 0001_ingest.sql\n', stderr: '' });
    expect(await runRecon(['migrate'], testDb.env)).toEqual({ code: 0, stdout: 'database is up to date\n', stderr: '' });
    const database = await testDb.reopen();
    try {
      const tables = await database.db.introspection.getTables();
      expect(tables.filter((table) => table.schema === 'recon').map((table) => table.name).sort()).toEqual([
        'files', 'rejected_rows', 'schema_migrations', 'transactions',
      ]);
    } finally {
      await testDb.close();
    }
  });
});
