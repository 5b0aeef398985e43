import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrate, migrationsDir } from '../../src/db/migrate.ts';
import { RECON_TABLES } from '../support/recon-tables.ts';
import { BACKENDS, createTestDatabase, hasPostgres, type TestDatabase } from '../support/test-database.ts';

describe.each(BACKENDS)('migrations on %s', (backend) => {
  let testDb: TestDatabase;
  beforeAll(async () => {
    if (backend === 'postgres' && !hasPostgres) return;
    testDb = await createTestDatabase(backend);
  });
  afterAll(async () => testDb?.drop());

  it.skipIf(backend === 'postgres' && !hasPostgres)('creates the recon schema and is idempotent', async () => {
    const { database } = testDb;
    const tables = await database.transaction((c) =>
      c.query<{ table_name: string }>(
        "SELECT table_name FROM information_schema.tables WHERE table_schema = 'recon' AND table_type = 'BASE TABLE' ORDER BY table_name",
      ),
    );
    expect(tables.rows.map((r) => r.table_name)).toEqual(RECON_TABLES);
    expect(await migrate(database)).toEqual([]);
  });

  it.skipIf(backend === 'postgres' && !hasPostgres)(
    'loads COPY data in batches that end on row boundaries',
    async () => {
      const { database } = testDb;
      const count = await database.transaction(async (c) => {
        await c.query('CREATE TEMP TABLE copy_probe (id integer, label text) ON COMMIT DROP');
        async function* rows() {
          for (let i = 1; i <= 1000; i++) yield `${i}\tété ${i}\n`;
        }
        await c.copyFrom('COPY copy_probe (id, label) FROM STDIN', rows(), { batchBytes: 512 });
        const { rows: result } = await c.query<{ n: string; last: string }>(
          'SELECT count(*)::text AS n, max(label) FILTER (WHERE id = 1000) AS last FROM copy_probe',
        );
        return result[0];
      });
      expect(count).toEqual({ n: '1000', last: 'été 1000' });
    },
  );

  it.skipIf(backend === 'postgres' && !hasPostgres)('turns just-in-time compilation off for the database', async () => {
    // Migrated from nothing: a copy of a migrated database (CREATE DATABASE ... TEMPLATE) does not take the settings
    // of the one it copies.
    const fresh = await createTestDatabase(backend, { migrationsDir: migrationsDir() });
    try {
      // A setting of the database, which its sessions take when they start: read from the catalog, as every new one will.
      const { rows } = await sql<{ settings: string[] | null }>`SELECT s.setconfig AS settings
        FROM pg_db_role_setting s JOIN pg_database d ON d.oid = s.setdatabase
        WHERE d.datname = current_database() AND s.setrole = 0`.execute(fresh.database.db);
      expect(rows[0]?.settings).toContain('jit=off');
    } finally {
      await fresh.drop();
    }
  });
});
