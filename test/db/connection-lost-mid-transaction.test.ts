import { sql } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/db/open-database.ts';
import { startTcpProxy, type TcpProxy } from '../support/tcp-proxy.ts';
import { createTestDatabase, hasPostgres, type TestDatabase } from '../support/test-database.ts';
import { waitUntil } from '../support/wait-until.ts';

/**
 * A connection lost while recon holds it between two statements (a load's transaction reading its next batch, a
 * reconciliation's coordinator between slices): pg reports it on the client, whom the pool no longer listens to
 * once it lent it out. It must fail the next statement, never the process. PostgreSQL only: PGlite has no
 * connection to lose.
 */
describe.skipIf(!hasPostgres)('a connection lost in the middle of a transaction (PostgreSQL)', () => {
  let testDb: TestDatabase;
  let proxy: TcpProxy;
  beforeAll(async () => {
    testDb = await createTestDatabase('postgres');
    const url = new URL(testDb.env.DATABASE_URL!);
    proxy = await startTcpProxy({ host: url.hostname, port: Number(url.port || 5432) });
  });
  afterAll(async () => {
    await proxy?.close();
    await testDb?.drop();
  });

  it('fails the next statement, and the process lives on to use a new connection', async () => {
    const database = await openDatabase({ databaseUrl: proxy.through(testDb.env.DATABASE_URL!), dataDir: '' });
    const direct = new pg.Client({ connectionString: testDb.env.DATABASE_URL });
    await direct.connect();
    try {
      const outcome = await database
        .transaction(async (connection) => {
          const { rows } = await connection.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
          // The connection goes while the transaction holds it between two statements: the server ends the backend,
          // and by then the client's end has seen its socket close.
          await proxy.cut();
          await waitUntil('the server to end the backend', async () => {
            const alive = await direct.query('SELECT 1 FROM pg_stat_activity WHERE pid = $1', [rows[0]!.pid]);
            return alive.rowCount === 0;
          });
          await connection.query('SELECT 1');
          return 'the statement after the loss went through';
        })
        .then(
          (value) => value,
          (error: unknown) => `failed: ${(error as Error).message}`,
        );
      expect(outcome).toMatch(/^failed: /);
      await proxy.restore();
      const { rows } = await sql<{ one: number }>`SELECT 1 AS one`.execute(database.db);
      expect(rows).toEqual([{ one: 1 }]);
    } finally {
      await direct.end();
      await database.close();
    }
  });
});
