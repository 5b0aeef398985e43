import { mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../src/db/database.ts';
import { openDatabase } from '../../src/db/open-database.ts';

async function sharedBuffers(database: Database): Promise<unknown> {
  const { rows } = await database.rawQuery<{ shared_buffers: string }>('SHOW shared_buffers');
  return rows[0]?.shared_buffers;
}

// Each test makes a new embedded database (initdb): seconds apiece, past the default 30 s on a busy 2-core machine.
describe('embedded PGlite settings', { timeout: 120_000 }, () => {
  let dataDir: string;
  beforeAll(async () => {
    dataDir = await mkdtemp(path.join(os.tmpdir(), 'recon-pglite-settings-'));
  });
  afterAll(async () => {
    await rm(dataDir, { recursive: true, force: true });
  });

  it('a new database runs with 16MB of shared buffers, and its postgresql.conf says so', async () => {
    const database = await openDatabase({ databaseUrl: undefined, dataDir });
    try {
      expect(await sharedBuffers(database)).toBe('16MB');
    } finally {
      await database.close();
    }
    expect(await readFile(path.join(dataDir, 'pgdata', 'postgresql.conf'), 'utf8')).toMatch(
      /^shared_buffers = 16MB\b/m,
    );
  });

  it("a data directory made with PGlite's defaults runs with 16MB too", async () => {
    const pgdata = path.join(dataDir, 'made-before', 'pgdata');
    await mkdir(path.dirname(pgdata));
    await (await PGlite.create(pgdata)).close();
    expect(await readFile(path.join(pgdata, 'postgresql.conf'), 'utf8')).toMatch(/^shared_buffers = 128MB\b/m);
    const database = await openDatabase({ databaseUrl: undefined, dataDir: path.dirname(pgdata) });
    try {
      expect(await sharedBuffers(database)).toBe('16MB');
    } finally {
      await database.close();
    }
  });
});
