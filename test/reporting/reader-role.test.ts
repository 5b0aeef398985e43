import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrationsDir } from '../../src/db/migrate.ts';
import { createTestDatabase, hasPostgres, type TestDatabase } from '../support/test-database.ts';
import { REPORTING_VIEWS, seedReporting } from './reporting-seed.ts';

/** The SQLSTATE of a query's failure, or 'ok'. */
async function outcome(client: pg.Client, text: string): Promise<string> {
  return client.query(text).then(
    () => 'ok',
    (error: unknown) => (error as { code?: string }).code ?? String(error),
  );
}

const INSUFFICIENT_PRIVILEGE = '42501';

function urlOf(testDb: TestDatabase, user: string): string {
  const url = new URL(testDb.env.DATABASE_URL!);
  url.username = user;
  url.password = '';
  return url.toString();
}

async function adminQuery(url: string, text: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(text);
  } finally {
    await client.end();
  }
}

// Roles exist on a real server only: PGlite has one user and skips the role migration.
describe.skipIf(!hasPostgres)('recon_reader on postgres', () => {
  const login = `acct_${randomBytes(6).toString('hex')}`;
  let testDb: TestDatabase;
  let reader: pg.Client;
  let recon: pg.Client;
  beforeAll(async () => {
    testDb = await createTestDatabase('postgres');
    await seedReporting(testDb.database);
    // What an accountant's login is meant to look like (trust auth here, a password in production).
    await adminQuery(testDb.env.DATABASE_URL!, `CREATE ROLE ${login} LOGIN IN ROLE recon_reader`);
    recon = new pg.Client({ connectionString: testDb.env.DATABASE_URL });
    await recon.connect();
    reader = new pg.Client({ connectionString: urlOf(testDb, login) });
    await reader.connect();
  });
  afterAll(async () => {
    await reader?.end();
    await recon?.end();
    await testDb?.drop();
    if (testDb) await adminQuery(process.env.DATABASE_URL!, `DROP ROLE IF EXISTS ${login}`);
  });

  it('reads every reporting view, row for row what recon sees', async () => {
    expect((await reader.query('SELECT current_user AS who')).rows).toEqual([{ who: login }]);
    for (const view of REPORTING_VIEWS) {
      const mine = await reader.query(`SELECT * FROM reporting.${view}`);
      const theirs = await recon.query(`SELECT * FROM reporting.${view}`);
      expect(theirs.rows.length, view).toBeGreaterThan(0);
      expect(mine.rows, view).toEqual(theirs.rows);
    }
  });

  it('is refused every table of recon', async () => {
    const { rows } = await recon.query<{ table_name: string }>(
      "SELECT table_name FROM information_schema.tables WHERE table_schema = 'recon' ORDER BY table_name",
    );
    expect(rows.map((r) => r.table_name)).toEqual(
      expect.arrayContaining(['files', 'orders', 'transactions', 'verdicts', 'schema_migrations']),
    );
    for (const { table_name: table } of rows) {
      expect(await outcome(reader, `SELECT * FROM recon.${table} LIMIT 1`), table).toBe(INSUFFICIENT_PRIVILEGE);
    }
  });

  it('writes nothing: no INSERT, UPDATE or DELETE through the views, no table anywhere', async () => {
    for (const view of REPORTING_VIEWS) {
      const { rows } = await recon.query<{ i: boolean; u: boolean; d: boolean; t: boolean }>(
        `SELECT has_table_privilege($1, $2, 'INSERT') AS i, has_table_privilege($1, $2, 'UPDATE') AS u,
                has_table_privilege($1, $2, 'DELETE') AS d, has_table_privilege($1, $2, 'TRUNCATE') AS t`,
        [login, `reporting.${view}`],
      );
      expect(rows, view).toEqual([{ i: false, u: false, d: false, t: false }]);
      // A view of one table (run_totals) would be updatable by its owner: the reader is stopped by privileges;
      // a view over a join or an aggregate is not updatable at all (55000) for anyone.
      const refused = [INSUFFICIENT_PRIVILEGE, '55000'];
      expect(refused, `INSERT ${view}`).toContain(
        await outcome(reader, `INSERT INTO reporting.${view} DEFAULT VALUES`),
      );
      expect(refused, `DELETE ${view}`).toContain(await outcome(reader, `DELETE FROM reporting.${view}`));
      // The first column: of one table (run_totals: run_id), not an identity column, which only DEFAULT may update,
      // nor a computed one (an amount in the currency's unit), which nobody may (0A000) whatever the privileges.
      const column = (await recon.query(`SELECT * FROM reporting.${view} LIMIT 0`)).fields.at(0)!.name;
      expect(refused, `UPDATE ${view}`).toContain(
        await outcome(reader, `UPDATE reporting.${view} SET ${column} = ${column}`),
      );
    }
    expect(await outcome(reader, 'DELETE FROM reporting.run_totals')).toBe(INSUFFICIENT_PRIVILEGE);
    for (const schema of ['public', 'reporting', 'recon']) {
      expect(await outcome(reader, `CREATE TABLE ${schema}.acct_scratch (id integer)`), schema).toBe(
        INSUFFICIENT_PRIVILEGE,
      );
    }
    expect(await outcome(reader, 'CREATE SCHEMA acct_scratch')).toBe(INSUFFICIENT_PRIVILEGE);
    expect(await outcome(reader, 'CREATE VIEW reporting.acct_scratch AS SELECT 1')).toBe(INSUFFICIENT_PRIVILEGE);
    // Nothing changed: recon still sees its rows.
    expect((await recon.query('SELECT count(*)::int AS n FROM reporting.files')).rows).toEqual([{ n: 5 }]);
  });
});

/**
 * Roles are cluster-wide and migrations run per database: two databases migrating at once both try to
 * create the role. The race is forced: A creates it and holds its transaction open, B's CREATE ROLE then
 * waits on A (seen in pg_stat_activity, no sleep), A commits, and B must go on without an error. The role
 * has a name of its own so that the shared recon_reader is left alone.
 */
describe.skipIf(!hasPostgres)('0006_reporting_reader.sql on two databases at once', () => {
  const role = `reader_${randomBytes(6).toString('hex')}`;
  const databases: TestDatabase[] = [];
  const clients: pg.Client[] = [];
  beforeAll(async () => {
    for (let i = 0; i < 2; i++) {
      const testDb = await createTestDatabase('postgres');
      databases.push(testDb);
      const client = new pg.Client({ connectionString: testDb.env.DATABASE_URL });
      await client.connect();
      clients.push(client);
    }
  });
  afterAll(async () => {
    for (const client of clients) await client.end();
    for (const testDb of databases) await testDb.drop();
    // The grants went with the databases; the role is now free to go.
    await adminQuery(process.env.DATABASE_URL!, `DROP ROLE IF EXISTS ${role}`);
  });

  it('tolerates the role being created by the other database meanwhile', async () => {
    const script = (await readFile(path.join(migrationsDir(), '0006_reporting_reader.sql'), 'utf8')).replaceAll(
      'recon_reader',
      role,
    );
    const [a, b] = clients as [pg.Client, pg.Client];
    await a.query('BEGIN');
    await a.query(script);
    await b.query('BEGIN');
    const bPid = (await b.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid;
    const bDone = b.query(script).then(
      () => 'ok',
      (error: unknown) => (error as Error).message,
    );
    await waitUntilBlocked(a, bPid);
    await a.query('COMMIT');
    expect(await bDone).toBe('ok');
    await b.query('COMMIT');

    const { rows } = await a.query<{ n: number }>('SELECT count(*)::int AS n FROM pg_roles WHERE rolname = $1', [role]);
    expect(rows).toEqual([{ n: 1 }]);
    const readable = await b.query<{ ok: boolean }>(
      "SELECT has_table_privilege($1, 'reporting.exceptions', 'SELECT') AS ok",
      [role],
    );
    expect(readable.rows).toEqual([{ ok: true }]);
  });
});

/** Polls until backend `pid` waits on a lock: the condition itself, not a guess at how long it takes. */
async function waitUntilBlocked(observer: pg.Client, pid: number): Promise<void> {
  for (;;) {
    const { rows } = await observer.query<{ waiting: boolean }>(
      "SELECT wait_event_type = 'Lock' AS waiting FROM pg_stat_activity WHERE pid = $1",
      [pid],
    );
    if (rows[0]?.waiting) return;
  }
}
