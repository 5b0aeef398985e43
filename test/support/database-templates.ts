/**
 * vitest's global setup: migrates one database per backend, once per run, that every test database is then a copy
 * of (test-database.ts). Migrating took about a second on PostgreSQL and three on PGlite, whose first open from
 * the build's gzip archive costs two of them; a copy takes a tenth of that. Removed when the run ends, with any
 * test database of this run a failed test left behind.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import type { TestProject } from 'vitest/node';
import { migrate } from '../../src/db/migrate.ts';
import { openDatabase } from '../../src/db/open-database.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    /** What test databases of this run are named after: `recon_test_<run>_...`, `recon-test-<run>-...`. */
    testRun: string;
    /** The migrated PostgreSQL database to copy (CREATE DATABASE ... TEMPLATE); none without DATABASE_URL. */
    postgresTemplate: string | null;
    /** The RECON_DATA_DIR of a migrated, closed PGlite database, to copy. */
    pgliteTemplate: string;
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const run = randomBytes(4).toString('hex');
  const adminUrl = process.env.DATABASE_URL;
  const [postgresTemplate, pgliteTemplate] = await Promise.all([
    adminUrl ? makePostgresTemplate(adminUrl, run) : null,
    makePgliteTemplate(run),
  ]);
  project.provide('testRun', run);
  project.provide('postgresTemplate', postgresTemplate);
  project.provide('pgliteTemplate', pgliteTemplate);
  return async () => {
    await rm(pgliteTemplate, { recursive: true, force: true });
    const left = (await readdir(os.tmpdir())).filter((name) => name.startsWith(`recon-test-${run}-`));
    await Promise.all(left.map((name) => rm(path.join(os.tmpdir(), name), { recursive: true, force: true })));
    if (adminUrl) await dropRunDatabases(adminUrl, run);
  };
}

async function makePostgresTemplate(adminUrl: string, run: string): Promise<string> {
  const name = `recon_template_${run}`;
  await adminQuery(adminUrl, `CREATE DATABASE ${name}`);
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  const database = await openDatabase({ databaseUrl: url.toString(), dataDir: os.tmpdir() });
  try {
    await migrate(database);
  } finally {
    // No session may stay on a template: CREATE DATABASE ... TEMPLATE refuses to copy a database in use.
    await database.close();
  }
  return name;
}

async function makePgliteTemplate(run: string): Promise<string> {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), `recon-template-${run}-`));
  const database = await openDatabase({ databaseUrl: undefined, dataDir });
  try {
    await migrate(database);
  } finally {
    // Closed, the directory is a clean shutdown's: a copy opens at once, with nothing to recover.
    await database.close();
  }
  return dataDir;
}

/** The template and whatever test database of this run is left (a test that failed before its drop). */
async function dropRunDatabases(adminUrl: string, run: string): Promise<void> {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    const { rows } = await client.query<{ datname: string }>(
      'SELECT datname FROM pg_database WHERE datname = $1 OR datname LIKE $2',
      [`recon_template_${run}`, `recon\\_test\\_${run}\\_%`],
    );
    for (const { datname } of rows) await client.query(`DROP DATABASE IF EXISTS ${datname} WITH (FORCE)`);
  } finally {
    await client.end();
  }
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
