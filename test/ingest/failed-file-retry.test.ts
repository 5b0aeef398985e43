import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ingestFiles } from '../../pipelines/ingest-files.ts';
import { loadConfig } from '../../src/config/config.ts';
import { BACKENDS, createTestDatabase, hasPostgres, type TestDatabase } from '../support/test-database.ts';

const limits = loadConfig({}).limits;

const EXPORT =
  'TRANSACTIONID;DATE;AMOUNT;CURRENCY\nRETRY1;2024-05-01 12:00:00;10.00;EUR\nRETRY2;2024-05-01 12:00:01;20.00;EUR\n';

describe.each(BACKENDS)('a file that failed before loading, ingested again, on %s', (backend) => {
  const skip = backend === 'postgres' && !hasPostgres;
  let testDb: TestDatabase;
  let tmp: string;
  beforeAll(async () => {
    if (skip) return;
    testDb = await createTestDatabase(backend);
    tmp = await mkdtemp(path.join(os.tmpdir(), 'recon-retry-'));
  });
  afterAll(async () => {
    await testDb?.drop();
    if (tmp) await rm(tmp, { recursive: true, force: true });
  });

  const ingest = (file: string) => ingestFiles(testDb.database, [file], { timezone: 'UTC', limits });
  const files = () =>
    testDb.database.db
      .selectFrom('recon.files')
      .select(['file_id', 'sha256', 'status', 'error_code'])
      .orderBy('file_id')
      .execute();
  const transactions = () =>
    testDb.database.db
      .selectFrom('recon.transactions')
      .select(['transaction_id', 'file_id'])
      .orderBy('transaction_id')
      .execute();

  it.skipIf(skip)(
    'keeps the failure as history, loads the good bytes under the same name, and fails the same bad bytes again',
    async () => {
      const file = path.join(tmp, 'export.csv.gz');
      const good = gzipSync(Buffer.from(EXPORT));
      // Cut before gzip's trailer: decompression fails, so nothing of the file reaches the database.
      const bad = good.subarray(0, good.length - 12);

      await writeFile(file, bad);
      const [failed] = await ingest(file);
      expect(failed).toMatchObject({
        file,
        status: 'failed',
        errorCode: 'ARCHIVE_CORRUPT',
        fileId: expect.any(String),
      });
      expect(failed!.status === 'failed' && failed!.error).toContain(file);
      expect(await transactions()).toEqual([]);

      await writeFile(file, good);
      const [loaded] = await ingest(file);
      expect(loaded).toMatchObject({ file, status: 'loaded', rows: 2, inserted: 2, rejected: 0 });
      expect(loaded!.fileId).not.toBe(failed!.fileId);

      // The bad bytes were never loaded, so they are not a duplicate: they are read again and fail again.
      await writeFile(file, bad);
      const [failedAgain] = await ingest(file);
      expect(failedAgain).toMatchObject({
        file,
        status: 'failed',
        errorCode: 'ARCHIVE_CORRUPT',
        sha256: failed!.sha256,
      });
      expect([failed!.fileId, loaded!.fileId]).not.toContain(failedAgain!.fileId);

      expect(await files()).toEqual([
        { file_id: failed!.fileId, sha256: failed!.sha256, status: 'failed', error_code: 'ARCHIVE_CORRUPT' },
        { file_id: loaded!.fileId, sha256: loaded!.sha256, status: 'loaded', error_code: null },
        { file_id: failedAgain!.fileId, sha256: failed!.sha256, status: 'failed', error_code: 'ARCHIVE_CORRUPT' },
      ]);
      expect(await transactions()).toEqual([
        { transaction_id: 'RETRY1', file_id: loaded!.fileId },
        { transaction_id: 'RETRY2', file_id: loaded!.fileId },
      ]);

      // The good bytes once more are a duplicate of their load, whatever failed around them.
      await writeFile(file, good);
      expect(await ingest(file)).toEqual([expect.objectContaining({ status: 'duplicate', fileId: loaded!.fileId })]);
    },
  );
});
