import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { copyFile, mkdtemp, readdir, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { inject } from 'vitest';
import type { Database } from '../../src/db/database.ts';
import { migrate, migrationsDir } from '../../src/db/migrate.ts';
import { openDatabase } from '../../src/db/open-database.ts';

export type Backend = 'postgres' | 'pglite';

/**
 * Every database suite runs on both backends. PostgreSQL needs DATABASE_URL (CI always sets it);
 * without it the postgres half is skipped, visibly, rather than silently passing.
 */
export const BACKENDS: readonly Backend[] = ['postgres', 'pglite'];
export const hasPostgres = Boolean(process.env.DATABASE_URL);

export interface TestDatabase {
  readonly backend: Backend;
  readonly database: Database;
  /** Environment that points a recon subprocess at this same database. */
  readonly env: { DATABASE_URL?: string; RECON_DATA_DIR: string };
  /** Closes the handle (needed before a subprocess may open a PGlite directory). */
  close(): Promise<void>;
  /** Reopens after `close`. */
  reopen(): Promise<Database>;
  drop(): Promise<void>;
}

/**
 * A database as the shipped migrations before `migration` (a file name) left it, without the views of today: what a
 * migration's own test upgrades.
 */
export async function createTestDatabaseBefore(backend: Backend, migration: string): Promise<TestDatabase> {
  const before = await mkdtemp(path.join(os.tmpdir(), 'recon-migrations-before-'));
  try {
    for (const name of await readdir(migrationsDir())) {
      if (name.endsWith('.sql') && name < migration)
        await copyFile(path.join(migrationsDir(), name), path.join(before, name));
    }
    return await createTestDatabase(backend, { migrationsDir: before });
  } finally {
    await rm(before, { recursive: true, force: true });
  }
}

/**
 * A fresh, migrated database of its own: a new PostgreSQL database, or a PGlite directory, each a copy of the run's
 * migrated template (database-templates.ts). `migrationsDir` migrates an empty one with those files instead of the
 * shipped ones (a schema as an earlier version left it).
 */
export async function createTestDatabase(
  backend: Backend,
  options: { migrationsDir?: string } = {},
): Promise<TestDatabase> {
  const run = inject('testRun');
  const copy = !options.migrationsDir;
  const dataDir = await mkdtemp(path.join(os.tmpdir(), `recon-test-${run}-`));
  let databaseUrl: string | undefined;
  let dbName: string | undefined;
  if (backend === 'postgres') {
    const adminUrl = process.env.DATABASE_URL;
    const template = inject('postgresTemplate');
    if (!adminUrl || !template) throw new Error('DATABASE_URL is required for postgres tests');
    dbName = `recon_test_${run}_${randomBytes(6).toString('hex')}`;
    await adminQuery(adminUrl, copy ? `CREATE DATABASE ${dbName} TEMPLATE ${template}` : `CREATE DATABASE ${dbName}`);
    const url = new URL(adminUrl);
    url.pathname = `/${dbName}`;
    databaseUrl = url.toString();
  } else if (copy) {
    await promisify(execFile)('cp', ['-R', `${inject('pgliteTemplate')}/.`, dataDir]);
  }
  const location = { databaseUrl, dataDir };
  let database = await openDatabase(location);
  // On a copy, a read that finds everything applied. Migrations of an earlier version made that version's views
  // themselves: no definitions of today's over them.
  await migrate(database, copy ? {} : { migrationsDir: options.migrationsDir, definitionsRoot: null });
  let open = true;
  const handle: TestDatabase = {
    backend,
    get database() {
      return database;
    },
    env: databaseUrl ? { DATABASE_URL: databaseUrl, RECON_DATA_DIR: dataDir } : { RECON_DATA_DIR: dataDir },
    async close() {
      if (open) await database.close();
      open = false;
    },
    async reopen() {
      if (!open) database = await openDatabase(location);
      open = true;
      return database;
    },
    async drop() {
      await handle.close();
      if (dbName) await adminQuery(process.env.DATABASE_URL!, `DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`);
      await rm(dataDir, { recursive: true, force: true });
    },
  };
  return handle;
}

async function adminQuery(url: string, sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}
