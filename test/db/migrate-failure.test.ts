import { copyFile, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrate, migrationsDir } from '../../src/db/migrate.ts';
import { ReconError } from '../../src/errors.ts';
import { BACKENDS, createTestDatabase, hasPostgres, type TestDatabase } from '../support/test-database.ts';

/**
 * A migration that fails part-way (its first statement ran, a later one did not) must leave nothing of itself and
 * not be recorded, with an error naming it on one line. An upgrade is one transaction: the files before it in the
 * same run are undone too, and the views, dropped while the migrations ran, are back as they were.
 */
describe.each(BACKENDS)('a failing migration on %s', (backend) => {
  const skip = backend === 'postgres' && !hasPostgres;
  let testDb: TestDatabase;
  let dir: string;
  let shipped: string[];
  beforeAll(async () => {
    if (skip) return;
    testDb = await createTestDatabase(backend);
    dir = await mkdtemp(path.join(os.tmpdir(), 'recon-migrations-'));
    shipped = (await readdir(migrationsDir())).filter((name) => name.endsWith('.sql')).sort();
    for (const name of shipped) await copyFile(path.join(migrationsDir(), name), path.join(dir, name));
    await writeFile(path.join(dir, '9001_fine.sql'), 'CREATE TABLE recon.fine_probe (id integer);\n');
    await writeFile(
      path.join(dir, '9002_broken.sql'),
      'CREATE TABLE recon.half_done (id integer);\nINSERT INTO recon.no_such_table VALUES (1);\n',
    );
    await writeFile(path.join(dir, '9003_after.sql'), 'CREATE TABLE recon.after_probe (id integer);\n');
  });
  afterAll(async () => {
    await testDb?.drop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  async function tables(): Promise<string[]> {
    const { rows } = await testDb.database.transaction((c) =>
      c.query<{ name: string }>(
        "SELECT table_name AS name FROM information_schema.tables WHERE table_schema = 'recon' AND (table_name LIKE '%probe' OR table_name = 'half_done') ORDER BY 1",
      ),
    );
    return rows.map((row) => row.name);
  }

  async function applied(): Promise<string[]> {
    const rows = await testDb.database.db
      .selectFrom('recon.schema_migrations')
      .select('name')
      .orderBy('name')
      .execute();
    return rows.map((row) => row.name);
  }

  it.skipIf(skip)('rolls the whole upgrade back, records nothing, and names the file in one line', async () => {
    const views = async () =>
      (
        await testDb.database.transaction((c) =>
          c.query<{ name: string }>(
            "SELECT table_name AS name FROM information_schema.views WHERE table_schema = 'reporting' ORDER BY 1",
          ),
        )
      ).rows.map((row) => row.name);
    const viewsBefore = await views();
    expect(viewsBefore).toContain('exceptions');
    const error: unknown = await migrate(testDb.database, { migrationsDir: dir }).then(
      () => undefined,
      (caught: unknown) => caught,
    );
    expect(error).toBeInstanceOf(ReconError);
    expect((error as ReconError).code).toBe('MIGRATION');
    expect((error as ReconError).message).toMatch(/^migration 9002_broken\.sql failed: .*no_such_table/);
    expect((error as ReconError).message).not.toContain('\n');
    expect(await tables()).toEqual([]);
    expect(await applied()).toEqual(shipped);
    expect(await views()).toEqual(viewsBefore);
  });
});
