import { readdir } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readDefinitions } from '../../src/db/definitions.ts';
import { MIGRATION_LOCK, migrationsDir } from '../../src/db/migrate.ts';
import { holdTransaction, lockWaiters, withApplicationName } from '../support/held-transaction.ts';
import { createTestDatabase, hasPostgres, type TestDatabase } from '../support/test-database.ts';
import { waitUntil } from '../support/wait-until.ts';
import { startRecon } from './run-recon.ts';

/**
 * Two `recon migrate` at once on a database that has never seen recon (two deploys, a CLI beside a server): the
 * overlap is forced by holding the migrations' advisory lock until both wait on it. PostgreSQL only: PGlite's
 * directory is opened by one process at a time.
 */
describe.skipIf(!hasPostgres)('two recon migrate at once (PostgreSQL only)', () => {
  let testDb: TestDatabase;
  beforeAll(async () => {
    testDb = await createTestDatabase('postgres');
    await testDb.database.transaction((c) => c.exec('DROP SCHEMA recon CASCADE'));
  });
  afterAll(async () => testDb?.drop());

  it('both wait on the lock, both exit 0, and every migration and definition is applied once', async () => {
    const files = (await readdir(migrationsDir())).filter((name) => name.endsWith('.sql')).sort();
    const url = testDb.env.DATABASE_URL!;
    const held = await holdTransaction(url, [`SELECT pg_advisory_xact_lock(${MIGRATION_LOCK})`]);
    let results;
    try {
      const runs = ['migrate-a', 'migrate-b'].map((name) =>
        startRecon(['migrate'], { ...testDb.env, DATABASE_URL: withApplicationName(url, name) }),
      );
      await waitUntil(
        'both migrators waiting on the advisory lock',
        async () =>
          (await lockWaiters(testDb.database.db)).filter(
            (w) => w.applicationName.startsWith('migrate-') && w.query.includes('pg_advisory_xact_lock'),
          ).length === 2,
      );
      await held.release();
      results = await Promise.all(runs.map((run) => run.done));
    } finally {
      await held.release();
    }
    // Nothing but the roles step's one line on the databases PUBLIC may still connect to.
    const publicConnect = expect.stringMatching(/^recon migrate: warning: PUBLIC may still CONNECT to [^\n]+\n$/);
    expect(results.map((result) => [result.code, result.stderr])).toEqual([
      [0, publicConnect],
      [0, publicConnect],
    ]);
    // Between them they applied each file once; which one applied which is theirs to race for.
    const applied = results.flatMap((result) => {
      const line = result.stdout.trimEnd();
      if (line === 'database is up to date') return [];
      expect(line).toMatch(/^applied \S+\.sql(, \S+\.sql)*$/);
      return line.slice('applied '.length).split(', ');
    });
    const definitions = (await readDefinitions()).map((definition) => definition.file);
    expect(applied.sort()).toEqual([...files, ...definitions].sort());
    const { rows } = await testDb.database.transaction((c) =>
      c.query<{ name: string; n: number }>(
        'SELECT name, count(*)::int AS n FROM recon.schema_migrations GROUP BY name ORDER BY name',
      ),
    );
    expect(rows).toEqual(files.map((name) => ({ name, n: 1 })));
  });
});
