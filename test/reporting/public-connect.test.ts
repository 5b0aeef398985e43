import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { grantReportingRoles } from '../../src/db/reporting-roles.ts';
import { BACKENDS, createTestDatabase, hasPostgres, type TestDatabase } from '../support/test-database.ts';

const unique = () => randomBytes(5).toString('hex');

async function adminQuery(text: string): Promise<void> {
  const client = new pg.Client({ connectionString: process.env.DATABASE_URL });
  await client.connect();
  try {
    await client.query(text);
  } finally {
    await client.end();
  }
}

/** Whether `user` may open a connection to the test database: the only way to know CONNECT is what we think. */
async function connects(testDb: TestDatabase, user: string): Promise<boolean> {
  const url = new URL(testDb.env.DATABASE_URL!);
  url.username = user;
  const client = new pg.Client({ connectionString: url.toString() });
  return client.connect().then(
    async () => {
      await client.end();
      return true;
    },
    () => false,
  );
}

/**
 * PostgreSQL gives PUBLIC CONNECT on every new database: a login in the reader role may connect to every database of
 * the server nobody closed. The roles step cannot close them (recon's user is rarely a superuser, and other databases
 * are not recon's), so it says so, in one line naming them and the commands to run.
 */
describe.each(BACKENDS)('the roles step and PUBLIC CONNECT on %s', (backend) => {
  const roles = { reader: `reader_${unique()}`, accountant: `accountant_${unique()}` };
  const login = `rdr_${unique()}`;
  const skip = backend === 'postgres' && !hasPostgres;
  let testDb: TestDatabase;
  let name: string;
  beforeAll(async () => {
    if (skip) return;
    testDb = await createTestDatabase(backend);
    name = new URL(testDb.env.DATABASE_URL ?? 'pglite:/').pathname.slice(1);
  });
  afterAll(async () => {
    await testDb?.drop();
    if (backend === 'postgres' && !skip)
      for (const role of [login, roles.reader, roles.accountant]) await adminQuery(`DROP ROLE IF EXISTS ${role}`);
  });

  const grant = async (force: boolean) => {
    const lines: string[] = [];
    const result = await grantReportingRoles(testDb.database, roles, { force, warn: (line) => lines.push(line) });
    return { result, lines };
  };

  it.skipIf(skip || backend === 'pglite')(
    'names the databases PUBLIC may connect to, this one first, and the REVOKE to run',
    async () => {
      const { result, lines } = await grant(true);
      expect(result).toBe('granted');
      expect(lines).toHaveLength(1);
      const [line] = lines as [string];
      expect(line).not.toContain('\n');
      expect(line).toMatch(new RegExp(`^PUBLIC may still CONNECT to \\d+ databases? of this server \\(${name}[,)]`));
      expect(line).toContain(`a login in ${roles.reader} or ${roles.accountant} may connect to each`);
      expect(line).toMatch(new RegExp(`REVOKE CONNECT ON DATABASE ${name}(, [^ ;]+)* FROM PUBLIC;`));
      expect(line).toMatch(
        new RegExp(`GRANT CONNECT ON DATABASE ${name} TO ${roles.reader}, ${roles.accountant}, \\S+;`),
      );
      expect(line).toContain('docs/operations.md#roles-per-database');
      // Only when it writes the grants: a command that finds them current says nothing.
      expect(await grant(false)).toEqual({ result: 'unchanged', lines: [] });
    },
  );

  it.skipIf(skip || backend === 'pglite')(
    "stops naming this database once the docs' REVOKE and GRANT ran on it, its readers still let in",
    async () => {
      await adminQuery(`CREATE ROLE ${login} LOGIN IN ROLE ${roles.reader}`);
      expect(await connects(testDb, login)).toBe(true);
      // What the line says for this database, as a superuser would run it; never the other databases of the server.
      await adminQuery(`REVOKE CONNECT ON DATABASE ${name} FROM PUBLIC`);
      await adminQuery(`GRANT CONNECT ON DATABASE ${name} TO ${roles.reader}, ${roles.accountant}, CURRENT_USER`);
      const { lines } = await grant(true);
      // The server's other databases (postgres at least) may still be open: a line for them, none of it for this one.
      for (const line of lines) {
        expect(line).not.toMatch(new RegExp(`\\b${name}\\b`));
        expect(line).not.toContain('GRANT');
      }
      expect(await connects(testDb, login)).toBe(true);
      const { rows } = await testDb.database.transaction((c) =>
        c.query<{ open: boolean }>("SELECT has_database_privilege('public', current_database(), 'CONNECT') AS open"),
      );
      expect(rows).toEqual([{ open: false }]);
    },
  );

  // PGlite is one database of one user: no roles, no other database to connect to, nothing to say.
  it.skipIf(skip || backend === 'postgres')('says nothing on PGlite, which has no roles', async () => {
    expect(await grant(true)).toEqual({ result: 'not on pglite', lines: [] });
  });
});
