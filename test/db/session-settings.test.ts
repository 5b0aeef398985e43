import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/db/open-database.ts';
import type { Database } from '../../src/db/database.ts';
import { hasPostgres } from '../support/test-database.ts';

/** recon's sessions on PostgreSQL hold a load's staged chunk in memory (open-database.ts), unless the URL says otherwise. */
describe.skipIf(!hasPostgres)('session settings of the PostgreSQL pool', () => {
  const opened: Database[] = [];
  const open = async (url: string) => {
    const database = await openDatabase({ databaseUrl: url, dataDir: '/nonexistent' });
    opened.push(database);
    return database;
  };
  const tempBuffers = async (database: Database) =>
    (await sql<{ temp_buffers: string }>`SHOW temp_buffers`.execute(database.db)).rows[0]!.temp_buffers;
  let url: URL;
  beforeAll(() => {
    url = new URL(process.env.DATABASE_URL!);
  });
  afterAll(async () => {
    await Promise.all(opened.map((database) => database.close()));
  });

  it('gives every session 32 MB of buffers for temporary tables', async () => {
    expect(await tempBuffers(await open(url.toString()))).toBe('32MB');
  });

  it('leaves the options of the connection string first', async () => {
    const withOptions = new URL(url);
    withOptions.searchParams.set('options', '-c temp_buffers=16MB');
    expect(await tempBuffers(await open(withOptions.toString()))).toBe('16MB');
  });
});
