import { readdir } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readDefinitions } from '../../src/db/definitions.ts';
import { migrationsDir } from '../../src/db/migrate.ts';
import { RECON_TABLES } from '../support/recon-tables.ts';
import { BACKENDS, createTestDatabase, hasPostgres, type TestDatabase } from '../support/test-database.ts';
import { runRecon, runReconInProcess } from './run-recon.ts';

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

  it.skipIf(skip)(
    'applies the migrations of sql/migrations, then the views and functions of sql/, once; then finds the database up to date',
    async () => {
      const files = (await readdir(migrationsDir())).filter((name) => name.endsWith('.sql')).sort();
      expect(files.slice(0, 2)).toEqual(['0001_ingest.sql', '0002_orders.sql']);
      // On PostgreSQL the roles step says, in one line, which databases PUBLIC may still connect to: this new one
      // first (CREATE DATABASE gives PUBLIC CONNECT). PGlite has no roles and says nothing.
      const name = new URL(testDb.env.DATABASE_URL ?? 'pglite:/').pathname.slice(1);
      const warning =
        backend === 'postgres'
          ? expect.stringMatching(
              new RegExp(
                `^recon migrate: warning: PUBLIC may still CONNECT to \\d+ databases? of this server \\(${name}[,)][^\n]* REVOKE CONNECT ON DATABASE ${name}[, ][^\n]*\n$`,
              ),
            )
          : '';
      expect(await runRecon(['migrate'], testDb.env)).toEqual({
        code: 0,
        stdout: `applied ${[...files, ...(await readDefinitions()).map((definition) => definition.file)].join(', ')}\n`,
        stderr: warning,
      });
      expect(await runReconInProcess(['migrate'], testDb.env)).toEqual({
        code: 0,
        stdout: 'database is up to date\n',
        stderr: warning,
      });
      const database = await testDb.reopen();
      try {
        const tables = await database.db.introspection.getTables();
        expect(
          tables
            .filter((table) => table.schema === 'recon' && !table.isView)
            .map((table) => table.name)
            .sort(),
        ).toEqual([...RECON_TABLES]);
      } finally {
        await testDb.close();
      }
    },
  );
});
