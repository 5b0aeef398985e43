import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeManyEntriesZip } from '../support/many-entries-zip.ts';
import { createTestDatabase, hasPostgres, type TestDatabase } from '../support/test-database.ts';
import { runRecon } from './run-recon.ts';

/**
 * A 39 MB zip of 400,000 empty entries once ran `recon ingest` (128 MB of old space, its shebang's flags) out of
 * heap while its directory was read: V8 aborted the process (exit 134). It must be refused from its end records.
 */
describe.skipIf(!hasPostgres)('recon ingest of a zip with 400,000 entries', () => {
  let testDb: TestDatabase;
  let tmp: string;
  beforeAll(async () => {
    testDb = await createTestDatabase('postgres');
    await testDb.close();
    tmp = await mkdtemp(path.join(os.tmpdir(), 'recon-many-entries-'));
  });
  afterAll(async () => {
    await testDb?.drop();
    if (tmp) await rm(tmp, { recursive: true, force: true });
  });

  it('fails the file in one line and exits 2, with the heap of the real command', async () => {
    const file = path.join(tmp, 'many-entries.zip');
    await writeManyEntriesZip(file, 400_000);
    const result = await runRecon(['ingest', file], testDb.env);
    expect(result).toEqual({
      code: 2,
      stdout: `${file}: failed: the zip declares 400000 entries, more than the 10000 allowed (RECON_MAX_ZIP_ENTRIES)\n`,
      stderr: '',
    });
  }, 60_000);
});
