import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { grantReportingRoles } from '../../src/db/reporting-roles.ts';
import { expectReconError } from '../support/expect-recon-error.ts';
import { createTestDatabase, hasPostgres, type TestDatabase } from '../support/test-database.ts';
import { REPORTING_VIEWS, seedReporting } from './reporting-seed.ts';

const INSUFFICIENT_PRIVILEGE = '42501';

/** The SQLSTATE of a query's failure, or 'ok'. */
async function outcome(client: pg.Client, text: string): Promise<string> {
  return client.query(text).then(
    () => 'ok',
    (error: unknown) => (error as { code?: string }).code ?? String(error),
  );
}

function urlOf(testDb: TestDatabase, user: string): string {
  const url = new URL(testDb.env.DATABASE_URL!);
  url.username = user;
  url.password = '';
  return url.toString();
}

async function adminQuery(text: string): Promise<void> {
  const client = new pg.Client({ connectionString: process.env.DATABASE_URL });
  await client.connect();
  try {
    await client.query(text);
  } finally {
    await client.end();
  }
}

async function connect(url: string): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  return client;
}

const unique = () => randomBytes(5).toString('hex');

/**
 * The accountant's role on a real server: roles of their own names (the shared defaults are left alone), granted by
 * the roles step as a command start does, and a login in each as an operator makes one.
 */
describe.skipIf(!hasPostgres)('the accountant role on postgres', () => {
  const roles = { reader: `reader_${unique()}`, accountant: `accountant_${unique()}` };
  const accountantLogin = `acct_${unique()}`;
  const readerLogin = `rdr_${unique()}`;
  let testDb: TestDatabase;
  let accountant: pg.Client;
  let reader: pg.Client;
  let recon: pg.Client;
  beforeAll(async () => {
    testDb = await createTestDatabase('postgres');
    await seedReporting(testDb.database);
    expect(await grantReportingRoles(testDb.database, roles)).toBe('granted');
    await adminQuery(`CREATE ROLE ${accountantLogin} LOGIN IN ROLE ${roles.accountant}`);
    await adminQuery(`CREATE ROLE ${readerLogin} LOGIN IN ROLE ${roles.reader}`);
    recon = await connect(testDb.env.DATABASE_URL!);
    accountant = await connect(urlOf(testDb, accountantLogin));
    reader = await connect(urlOf(testDb, readerLogin));
  });
  afterAll(async () => {
    for (const client of [accountant, reader, recon]) await client?.end();
    await testDb?.drop();
    for (const role of [accountantLogin, readerLogin, roles.reader, roles.accountant])
      await adminQuery(`DROP ROLE IF EXISTS ${role}`);
  });

  it('reads every reporting view, as the reader does', async () => {
    for (const view of REPORTING_VIEWS) {
      const theirs = await recon.query(`SELECT * FROM reporting.${view}`);
      expect((await accountant.query(`SELECT * FROM reporting.${view}`)).rows, view).toEqual(theirs.rows);
    }
  });

  it('acknowledges, notes and reopens through reporting.exception_action, recorded under its login', async () => {
    const ack = await accountant.query<{ id: string }>(
      "SELECT reporting.exception_action('UNK-0', 'ack', 'a test payment of the shop') AS id",
    );
    await accountant.query(
      "SELECT reporting.exception_action(order_id => 'UNK-0', action => 'note', note => 'ticket 42', actor => 'Alice B.')",
    );
    const { rows } = await accountant.query<{ acknowledged: boolean; acknowledged_by: string; last_note: string }>(
      "SELECT acknowledged, acknowledged_by, last_note FROM reporting.exceptions WHERE order_id = 'UNK-0'",
    );
    expect(rows).toEqual([{ acknowledged: true, acknowledged_by: accountantLogin, last_note: 'ticket 42' }]);
    const trail = await accountant.query<{ action_id: string; action: string; acted_by: string; login: string }>(
      "SELECT action_id, action, acted_by, login FROM reporting.exception_actions WHERE order_id = 'UNK-0' ORDER BY action_id",
    );
    expect(trail.rows).toEqual([
      { action_id: ack.rows[0]!.id, action: 'ack', acted_by: accountantLogin, login: accountantLogin },
      { action_id: expect.any(String), action: 'note', acted_by: 'Alice B.', login: accountantLogin },
    ]);
    await accountant.query("SELECT reporting.exception_action('UNK-0', 'reopen')");
    // The function's own refusals reach the accountant with their codes.
    expect(await outcome(accountant, "SELECT reporting.exception_action('NOPE-9', 'ack', 'x')")).toBe('RC001');
    expect(await outcome(accountant, "SELECT reporting.exception_action('UNK-0', 'reopen')")).toBe('RC003');
  });

  it('writes nothing else: not the trail, not a table, not another function', async () => {
    const statements = [
      "INSERT INTO recon.exception_actions (order_id, action, note, acted_by, status, run_id) VALUES ('O1', 'ack', 'x', 'me', 'amount_mismatch', 1)",
      "UPDATE recon.exception_actions SET note = 'rewritten'",
      'DELETE FROM recon.exception_actions',
      'SELECT * FROM recon.exception_actions',
      "INSERT INTO reporting.exception_actions (order_id) VALUES ('O1')",
      'DELETE FROM reporting.exception_actions',
      "UPDATE reporting.exception_actions SET order_id = 'O2'",
      'SELECT * FROM recon.verdicts LIMIT 1',
      "UPDATE recon.verdicts SET status = 'matched'",
      "SELECT recon.minor_to_unit(100, 'EUR')",
      "SELECT recon.format_money(100, 'EUR')",
      'CREATE TABLE public.acct_scratch (id integer)',
      'CREATE TABLE reporting.acct_scratch (id integer)',
      "CREATE FUNCTION reporting.acct_scratch() RETURNS int LANGUAGE sql AS 'SELECT 1'",
    ];
    for (const statement of statements) {
      // A view over a join (not updatable at all, 55000) is refused before privileges are looked at.
      expect([INSUFFICIENT_PRIVILEGE, '55000'], statement).toContain(await outcome(accountant, statement));
    }
    const { rows } = await recon.query<{ n: number }>('SELECT count(*)::int AS n FROM recon.exception_actions');
    expect(rows[0]!.n).toBeGreaterThan(0);
  });

  it('leaves the reader reading only', async () => {
    expect((await reader.query('SELECT count(*)::int AS n FROM reporting.exception_actions')).rows[0]).toEqual({
      n: expect.any(Number),
    });
    expect(await outcome(reader, "SELECT reporting.exception_action('O1', 'note', 'x')")).toBe(INSUFFICIENT_PRIVILEGE);
  });
});

/**
 * Two recon databases on one server, each with a reader role of its own: a login in one role reads its database's
 * views and is refused the other's, and the shared default role no longer reads either.
 */
describe.skipIf(!hasPostgres)('reader roles per database on postgres', () => {
  const sides = ['a', 'b'].map(() => ({
    roles: { reader: `reader_${unique()}`, accountant: `accountant_${unique()}` },
    login: `login_${unique()}`,
  }));
  const databases: TestDatabase[] = [];
  beforeAll(async () => {
    for (const side of sides) {
      const testDb = await createTestDatabase('postgres');
      databases.push(testDb);
      await seedReporting(testDb.database);
      await grantReportingRoles(testDb.database, side.roles);
      await adminQuery(`CREATE ROLE ${side.login} LOGIN IN ROLE ${side.roles.reader}`);
    }
  });
  afterAll(async () => {
    for (const testDb of databases) await testDb.drop();
    for (const side of sides)
      for (const role of [side.login, side.roles.reader, side.roles.accountant])
        await adminQuery(`DROP ROLE IF EXISTS ${role}`);
  });

  it("reads its own database's views and is refused the other's", async () => {
    for (const [i, side] of sides.entries()) {
      for (const [j, testDb] of databases.entries()) {
        const client = await connect(urlOf(testDb, side.login));
        try {
          const expected = i === j ? 'ok' : INSUFFICIENT_PRIVILEGE;
          for (const view of REPORTING_VIEWS)
            expect(
              await outcome(client, `SELECT * FROM reporting.${view} LIMIT 1`),
              `${side.login} on ${j}: ${view}`,
            ).toBe(expected);
        } finally {
          await client.end();
        }
      }
    }
  });

  it('takes the default roles and the roles granted before away from the database', async () => {
    const [testDb, side] = [databases[0]!, sides[0]!];
    const recon = await connect(testDb.env.DATABASE_URL!);
    const privileges = async (role: string) =>
      (
        await recon.query<{ reads: boolean; acts: boolean }>(
          `SELECT has_table_privilege($1, 'reporting.exceptions', 'SELECT') AS reads,
             has_function_privilege($1, 'reporting.exception_action(text, text, text, text)', 'EXECUTE') AS acts`,
          [role],
        )
      ).rows[0];
    try {
      // Granted by 0006 to every database; the defaults exist on this server since the first migration of any.
      expect(await privileges('recon_reader')).toEqual({ reads: false, acts: false });
      // A role renamed: the next grant takes the old one's rights here away.
      const renamed = { reader: `reader_${unique()}`, accountant: side.roles.accountant };
      expect(await grantReportingRoles(testDb.database, renamed)).toBe('granted');
      expect(await privileges(side.roles.reader)).toEqual({ reads: false, acts: false });
      expect(await privileges(renamed.reader)).toEqual({ reads: true, acts: false });
      expect(await privileges(side.roles.accountant)).toEqual({ reads: true, acts: true });
      // Nothing changed since: a command start writes nothing.
      expect(await grantReportingRoles(testDb.database, renamed)).toBe('unchanged');
      // Back to the first names, so that cleaning up finds what it expects.
      await grantReportingRoles(testDb.database, side.roles);
      await adminQuery(`DROP ROLE ${renamed.reader}`);
    } finally {
      await recon.end();
    }
  });

  it('refuses to name the role recon connects as, whose rights a later rename would take away', async () => {
    const [testDb, side] = [databases[0]!, sides[0]!];
    const self = new URL(testDb.env.DATABASE_URL!).username;
    await expectReconError(
      () => grantReportingRoles(testDb.database, { reader: self, accountant: side.roles.accountant }, { force: true }),
      'CONFIG',
      `RECON_READER_ROLE names ${self}, the role recon connects as`,
    );
    await expectReconError(
      () => grantReportingRoles(testDb.database, { reader: side.roles.reader, accountant: self }, { force: true }),
      'CONFIG',
      `RECON_ACCOUNTANT_ROLE names ${self}`,
    );
    // Nothing was taken away meanwhile: the reader still reads.
    const client = await connect(urlOf(testDb, side.login));
    try {
      expect(await outcome(client, 'SELECT * FROM reporting.exceptions LIMIT 1')).toBe('ok');
    } finally {
      await client.end();
    }
  });
});

/**
 * Roles are cluster-wide: another database may create the same role while this one grants. The race is forced: a
 * transaction of another database creates the role and stays open, the roles step's CREATE ROLE then waits on it
 * (seen in pg_stat_activity, no sleep), the other commits, and the step must go on without an error.
 */
describe.skipIf(!hasPostgres)('the roles step beside another database creating the same role', () => {
  const roles = { reader: `reader_${unique()}`, accountant: `accountant_${unique()}` };
  let mine: TestDatabase;
  let other: TestDatabase;
  beforeAll(async () => {
    mine = await createTestDatabase('postgres');
    other = await createTestDatabase('postgres');
  });
  afterAll(async () => {
    await mine?.drop();
    await other?.drop();
    for (const role of [roles.reader, roles.accountant]) await adminQuery(`DROP ROLE IF EXISTS ${role}`);
  });

  it('tolerates the role being created by the other database meanwhile', async () => {
    const creator = await connect(other.env.DATABASE_URL!);
    const observer = await connect(other.env.DATABASE_URL!);
    try {
      await creator.query('BEGIN');
      await creator.query(`CREATE ROLE ${roles.reader} NOLOGIN`);
      const granting = grantReportingRoles(mine.database, roles);
      // The step's CREATE ROLE waits for the creator's transaction: found by its lock wait on this server.
      for (;;) {
        const { rows } = await observer.query<{ waiting: boolean }>(
          `SELECT EXISTS (SELECT FROM pg_stat_activity WHERE datname = $1 AND wait_event_type = 'Lock'
             AND query LIKE 'CREATE ROLE%') AS waiting`,
          [new URL(mine.env.DATABASE_URL!).pathname.slice(1)],
        );
        if (rows[0]!.waiting) break;
      }
      await creator.query('COMMIT');
      expect(await granting).toBe('granted');
      const recon = await connect(mine.env.DATABASE_URL!);
      try {
        const { rows } = await recon.query<{ reads: boolean }>(
          "SELECT has_table_privilege($1, 'reporting.exceptions', 'SELECT') AS reads",
          [roles.reader],
        );
        expect(rows).toEqual([{ reads: true }]);
      } finally {
        await recon.end();
      }
    } finally {
      await creator.end();
      await observer.end();
    }
  });
});
