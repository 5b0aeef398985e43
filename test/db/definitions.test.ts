import { cp, mkdir, mkdtemp, readdir, readFile, rm, unlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../src/db/database.ts';
import { definitionsRoot, readDefinitions } from '../../src/db/definitions.ts';
import { isMigrated, migrate, migrationsDir } from '../../src/db/migrate.ts';
import { ReconError } from '../../src/errors.ts';
import { BACKENDS, createTestDatabase, hasPostgres, type TestDatabase } from '../support/test-database.ts';

/**
 * The migrations as recon shipped them up to 0028, when each migration re-created the views it changed: the
 * `git show d72c478:sql/migrations/<file>` of every file, as one gzipped JSON object. A database built from them is
 * a database of that version, to be upgraded.
 */
const MIGRATIONS_0028 = path.join(import.meta.dirname, 'fixtures', 'migrations-0028.json.gz');

async function writeMigrations0028(): Promise<string> {
  const files = JSON.parse(gunzipSync(await readFile(MIGRATIONS_0028)).toString('utf8')) as Record<string, string>;
  const dir = await mkdtemp(path.join(os.tmpdir(), 'recon-migrations-0028-'));
  for (const [name, text] of Object.entries(files)) await writeFile(path.join(dir, name), text);
  return dir;
}

/** A copy of sql/ to change: its migrations and its definitions. */
async function copyOfSql(): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'recon-sql-'));
  await cp(definitionsRoot(), dir, { recursive: true });
  return dir;
}

interface CatalogObject {
  readonly name: string;
  readonly definition: string;
  readonly comment: string | null;
  readonly columns: string | null;
}

/** Every view and function of schemas recon and reporting as the catalog holds it: definition, columns, comments. */
async function catalog(database: Database): Promise<CatalogObject[]> {
  const { rows } = await database.transaction((c) =>
    c.query<CatalogObject>(`
      SELECT n.nspname || '.' || k.relname AS name, pg_get_viewdef(k.oid) AS definition,
        obj_description(k.oid, 'pg_class') AS comment,
        (SELECT string_agg(a.attname || ' ' || format_type(a.atttypid, a.atttypmod) || ' ' ||
            coalesce(col_description(k.oid, a.attnum), '-'), E'\\n' ORDER BY a.attnum)
         FROM pg_attribute a WHERE a.attrelid = k.oid AND a.attnum > 0 AND NOT a.attisdropped) AS columns
      FROM pg_class k JOIN pg_namespace n ON n.oid = k.relnamespace
      WHERE n.nspname IN ('recon', 'reporting') AND k.relkind = 'v'
      UNION ALL
      SELECT p.oid::regprocedure::text, pg_get_functiondef(p.oid), obj_description(p.oid, 'pg_proc'),
        coalesce(p.proacl::text, '')
      FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
      WHERE n.nspname IN ('recon', 'reporting') AND p.prokind = 'f'
      ORDER BY 1`),
  );
  return rows;
}

describe('definitions as code, in order', () => {
  it('come after what they name, whatever their file names', async () => {
    const names = (await readDefinitions()).map((definition) => definition.name);
    expect(names.indexOf('recon.current_verdicts')).toBeLessThan(names.indexOf('reporting.reconciliation'));
    expect(names.indexOf('reporting.reconciliation')).toBeLessThan(names.indexOf('reporting.exceptions'));
    expect(names.indexOf('recon.minor_to_unit')).toBeLessThan(names.indexOf('reporting.transactions'));
    expect(new Set(names).size).toBe(names.length);
  });

  it('refuse a file that names the wrong object, and definitions that name each other in a circle', async () => {
    const root = await mkdtemp(path.join(os.tmpdir(), 'recon-definitions-'));
    try {
      await mkdir(path.join(root, 'reporting'));
      await writeFile(path.join(root, 'reporting', 'a.sql'), 'CREATE VIEW reporting.b AS SELECT 1 AS one;\n');
      await expect(readDefinitions(root)).rejects.toThrow(/^sql\/reporting\/a\.sql must define reporting\.a/);
      await writeFile(path.join(root, 'reporting', 'a.sql'), 'CREATE VIEW reporting.a AS SELECT * FROM reporting.b;\n');
      await writeFile(
        path.join(root, 'reporting', 'b.sql'),
        "-- reads reporting.a? no: this comment and 'reporting.a' in a string are no dependency\nCREATE VIEW reporting.b AS SELECT 'reporting.a' AS one;\n",
      );
      expect((await readDefinitions(root)).map((definition) => definition.name)).toEqual([
        'reporting.b',
        'reporting.a',
      ]);
      await writeFile(path.join(root, 'reporting', 'b.sql'), 'CREATE VIEW reporting.b AS SELECT * FROM reporting.a;\n');
      await expect(readDefinitions(root)).rejects.toThrow(
        /sql\/reporting\/a\.sql, sql\/reporting\/b\.sql name each other in a circle/,
      );
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  });

  it('keeps the shipped migrations free of views: those live in their files', async () => {
    for (const name of await readdir(migrationsDir())) {
      expect(await readFile(path.join(migrationsDir(), name), 'utf8'), name).not.toMatch(
        /^\s*CREATE\s+(OR\s+REPLACE\s+)?VIEW/im,
      );
    }
  });
});

describe.each(BACKENDS)('views and functions defined as code on %s', (backend) => {
  const skip = backend === 'postgres' && !hasPostgres;
  let fresh: TestDatabase;
  let freshCatalog: CatalogObject[];
  const cleanup: string[] = [];
  beforeAll(async () => {
    if (skip) return;
    fresh = await createTestDatabase(backend);
    freshCatalog = await catalog(fresh.database);
  });
  afterAll(async () => {
    await fresh?.drop();
    for (const dir of cleanup) await rm(dir, { recursive: true, force: true });
  });

  it.skipIf(skip)('a migrated database holds exactly the files, as recorded', async () => {
    const definitions = await readDefinitions();
    const recorded = await fresh.database.db
      .selectFrom('recon.schema_definitions')
      .select(['file', 'name', 'kind', 'sha256'])
      .orderBy('file')
      .execute();
    expect(recorded).toEqual(
      definitions
        .map(({ file, name, kind, sha256 }) => ({ file, name, kind, sha256 }))
        .sort((a, b) => (a.file < b.file ? -1 : 1)),
    );
    const views = freshCatalog.filter((object) => !object.name.includes('('));
    expect(views.map((view) => view.name).sort()).toEqual(
      definitions
        .filter((definition) => definition.kind === 'view')
        .map((definition) => definition.name)
        .sort(),
    );
    expect(await migrate(fresh.database)).toEqual([]);
  });

  it.skipIf(skip)(
    'a database of migration 0028 upgrades to the same views, functions and comments, data kept',
    async () => {
      const old = await writeMigrations0028();
      cleanup.push(old);
      const upgraded = await createTestDatabase(backend, { migrationsDir: old });
      try {
        await upgraded.database.transaction(async (c) => {
          await c.exec(`INSERT INTO recon.accounts (identifier, payment_methods) VALUES ('shop-a', '{wallet}')`);
        });
        const applied = await migrate(upgraded.database);
        // The migrations after 0028, then every definition, are new to it.
        const later = (await readdir(migrationsDir())).filter((name) => name.endsWith('.sql') && name >= '0029').sort();
        expect(applied).toEqual([...later, ...(await readDefinitions()).map((definition) => definition.file)]);
        expect(await catalog(upgraded.database)).toEqual(freshCatalog);
        const { rows } = await upgraded.database.transaction((c) =>
          c.query<{ identifier: string }>('SELECT identifier FROM reporting.accounts'),
        );
        expect(rows).toEqual([{ identifier: 'shop-a' }]);
        expect(await migrate(upgraded.database)).toEqual([]);
      } finally {
        await upgraded.drop();
      }
    },
  );

  it.skipIf(skip)('a changed file is applied alone, and a removed one is dropped', async () => {
    const root = await copyOfSql();
    cleanup.push(root);
    const options = { migrationsDir: path.join(root, 'migrations'), definitionsRoot: root };
    const testDb = await createTestDatabase(backend);
    try {
      const accounts = path.join(root, 'reporting', 'accounts.sql');
      const text = await readFile(accounts, 'utf8');
      await writeFile(accounts, text.replace('FROM recon.accounts', ", 'probe'::text AS probe FROM recon.accounts"));
      expect(text).not.toBe(await readFile(accounts, 'utf8'));
      expect(await isMigrated(testDb.database, options)).toBe(false);
      expect(await migrate(testDb.database, options)).toEqual(['reporting/accounts.sql']);
      expect(await isMigrated(testDb.database, options)).toBe(true);
      const columns = async () =>
        (
          await testDb.database.transaction((c) =>
            c.query<{ name: string }>(
              "SELECT column_name AS name FROM information_schema.columns WHERE table_schema = 'reporting' AND table_name = 'accounts' ORDER BY ordinal_position",
            ),
          )
        ).rows.map((row) => row.name);
      expect(await columns()).toContain('probe');

      await unlink(path.join(root, 'reporting', 'run_account_totals.sql'));
      expect(await migrate(testDb.database, options)).toEqual([]);
      const { rows } = await testDb.database.transaction((c) =>
        c.query<{ present: boolean }>("SELECT to_regclass('reporting.run_account_totals') IS NOT NULL AS present"),
      );
      expect(rows).toEqual([{ present: false }]);
      expect(await migrate(testDb.database, options)).toEqual([]);
    } finally {
      await testDb.drop();
    }
  });

  it.skipIf(skip)("stops at an object of somebody else's that reads a view, leaving everything as it was", async () => {
    const root = await copyOfSql();
    cleanup.push(root);
    const options = { migrationsDir: path.join(root, 'migrations'), definitionsRoot: root };
    const testDb = await createTestDatabase(backend);
    try {
      await testDb.database.transaction((c) =>
        c.exec('CREATE SCHEMA mine; CREATE VIEW mine.methods AS SELECT identifier FROM reporting.accounts'),
      );
      const before = await catalog(testDb.database);
      const accounts = path.join(root, 'reporting', 'accounts.sql');
      await writeFile(
        accounts,
        (await readFile(accounts, 'utf8')).replace('FROM recon.accounts', ', 1 AS probe FROM recon.accounts'),
      );
      await writeFile(path.join(root, 'migrations', '9001_probe.sql'), 'CREATE TABLE recon.probe (id integer);\n');
      const error = await migrate(testDb.database, options).then(
        () => undefined,
        (caught: unknown) => caught,
      );
      expect(error).toBeInstanceOf(ReconError);
      expect((error as ReconError).message).toMatch(/^cannot re-create recon's views: .*mine\.methods/);
      expect((error as ReconError).message).not.toContain('\n');
      expect(await catalog(testDb.database)).toEqual(before);
      const { rows } = await testDb.database.transaction((c) =>
        c.query<{ present: boolean }>("SELECT to_regclass('recon.probe') IS NOT NULL AS present"),
      );
      expect(rows).toEqual([{ present: false }]);
    } finally {
      await testDb.drop();
    }
  });
});
