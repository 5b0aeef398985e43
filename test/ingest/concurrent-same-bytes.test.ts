import { createHash } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ingestFiles } from '../../pipelines/ingest-files.ts';
import { loadConfig } from '../../src/config/config.ts';
import type { FileResult } from '../../src/ingest/file-result.ts';
import { holdTransaction, lockWaiters, type HeldTransaction } from '../support/held-transaction.ts';
import { createTestDatabase, hasPostgres, type TestDatabase } from '../support/test-database.ts';
import { waitUntil } from '../support/wait-until.ts';

/**
 * Two loads of the same bytes at once (the same export delivered twice, two workers): the second must not load it
 * again. The early "already loaded" look-up cannot see a load still in flight, so what decides is the partial unique
 * index files_loaded_sha256_key: the test holds, in a transaction of its own, a 'loaded' row for those bytes, makes
 * sure the load waits on it, then commits (the holder won: the load is a duplicate of the holder's file) or rolls
 * back (the load goes on as if alone). PostgreSQL only: PGlite has one connection, so two loads never overlap.
 */
const limits = loadConfig({}).limits;
const CSV =
  'TRANSACTIONID;DATE;AMOUNT;CURRENCY;EXECCODE\nSB1;2024-05-01 12:00:00;1.05;EUR;0\nSB2;2024-05-01 12:00:00;2.05;EUR;0\n';
const SHA256 = createHash('sha256').update(CSV).digest('hex');

describe.skipIf(!hasPostgres)('two loads of the same bytes at once (PostgreSQL only)', () => {
  let testDb: TestDatabase;
  let dir: string;
  let file: string;

  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'recon-same-bytes-'));
    file = path.join(dir, 'export.csv');
    await writeFile(file, CSV);
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  /** A fresh database and a held claim on the file's bytes, the way a load in flight claims them. */
  async function holdClaim(): Promise<HeldTransaction> {
    testDb = await createTestDatabase('postgres');
    return holdTransaction(testDb.env.DATABASE_URL!, [
      `INSERT INTO recon.files (name, arrival, sha256, size_bytes, compression, status) VALUES ('winner.csv', 'ingest', '${SHA256}', ${CSV.length}, 'none', 'loaded')`,
    ]);
  }

  /** The load's claim as Kysely writes it: insert into "recon"."files". */
  const CLAIM_INSERT = /insert into "recon"\."files"/i;

  /** Starts the load and resolves once it waits on the holder's claim, past the early look-up (wrapped: not awaited). */
  async function loadBehind(held: HeldTransaction): Promise<{ load: Promise<FileResult[]> }> {
    const load = ingestFiles(testDb.database, [file], { timezone: 'UTC', limits });
    const waiter = await waitUntil('the load waiting on the held claim of its bytes', async () =>
      (await lockWaiters(testDb.database.db)).find((w) => w.pid !== held.pid && CLAIM_INSERT.test(w.query)),
    );
    expect(waiter.relation).toBeNull(); // it waits on the holder's transaction, not on a table
    return { load };
  }

  async function files() {
    return testDb.database.db
      .selectFrom('recon.files')
      .select(['file_id', 'name', 'status'])
      .orderBy('file_id')
      .execute();
  }

  async function transactionIds() {
    return (
      await testDb.database.db
        .selectFrom('recon.transactions')
        .select('transaction_id')
        .orderBy('transaction_id')
        .execute()
    ).map((r) => r.transaction_id);
  }

  it("the holder commits: the load ends as a duplicate of the holder's file, and nothing of it is committed", async () => {
    const held = await holdClaim();
    try {
      const { load } = await loadBehind(held);
      await held.commit();
      const [result] = await load;
      const recorded = await files();
      expect(recorded).toEqual([{ file_id: recorded[0]!.file_id, name: 'winner.csv', status: 'loaded' }]);
      expect(result).toEqual({
        file,
        sha256: SHA256,
        sizeBytes: CSV.length,
        compression: 'none',
        status: 'duplicate',
        fileId: String(recorded[0]!.file_id),
      });
      expect(await transactionIds()).toEqual([]);
    } finally {
      await held.release();
      await testDb.drop();
    }
  });

  it('the holder rolls back: the load loads the file as if it were alone', async () => {
    const held = await holdClaim();
    try {
      const { load } = await loadBehind(held);
      await held.release();
      const [result] = await load;
      expect(result).toMatchObject({ file, status: 'loaded', rows: 2, inserted: 2, rejected: 0 });
      const recorded = await files();
      expect(recorded).toEqual([{ file_id: recorded[0]!.file_id, name: file, status: 'loaded' }]);
      expect(result!.fileId).toBe(String(recorded[0]!.file_id));
      expect(await transactionIds()).toEqual(['SB1', 'SB2']);
    } finally {
      await held.release();
      await testDb.drop();
    }
  });
});
