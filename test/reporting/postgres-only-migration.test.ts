import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrate } from '../../src/db/migrate.ts';
import { BACKENDS, createTestDatabase, hasPostgres, type TestDatabase } from '../support/test-database.ts';

describe.each(BACKENDS)('the -- recon:postgres-only migration marker on %s', (backend) => {
  const skip = backend === 'postgres' && !hasPostgres;
  let testDb: TestDatabase;
  let dir: string;
  beforeAll(async () => {
    if (skip) return;
    testDb = await createTestDatabase(backend);
    dir = await mkdtemp(path.join(os.tmpdir(), 'recon-migrations-'));
    await writeFile(
      path.join(dir, '9001_marked.sql'),
      '-- recon:postgres-only\nCREATE TABLE recon.marked_probe (id integer);\n',
    );
    await writeFile(
      path.join(dir, '9002_marked_crlf.sql'),
      '-- recon:postgres-only  \r\nCREATE TABLE recon.marked_crlf_probe (id integer);\r\n',
    );
    // The marker counts on the first line only: further down it is an ordinary comment.
    await writeFile(
      path.join(dir, '9003_not_first_line.sql'),
      '-- a probe\n-- recon:postgres-only\nCREATE TABLE recon.unmarked_probe (id integer);\n',
    );
  });
  afterAll(async () => {
    await testDb?.drop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it.skipIf(skip)(`records marked files as applied and ${backend === 'pglite' ? 'skips' : 'runs'} them`, async () => {
    expect(await migrate(testDb.database, { migrationsDir: dir, definitionsRoot: null })).toEqual([
      '9001_marked.sql',
      '9002_marked_crlf.sql',
      '9003_not_first_line.sql',
    ]);
    const { rows } = await testDb.database.transaction((c) =>
      c.query<{ table_name: string }>(
        "SELECT table_name FROM information_schema.tables WHERE table_schema = 'recon' AND table_name LIKE '%probe' ORDER BY table_name",
      ),
    );
    expect(rows.map((r) => r.table_name)).toEqual(
      backend === 'pglite' ? ['unmarked_probe'] : ['marked_crlf_probe', 'marked_probe', 'unmarked_probe'],
    );
    expect(await migrate(testDb.database, { migrationsDir: dir, definitionsRoot: null })).toEqual([]);
  });
});
