import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../src/db/database.ts';
import { BACKENDS, createTestDatabase, hasPostgres, type TestDatabase } from '../support/test-database.ts';

let fileCounter = 0;

async function insertFile(database: Database): Promise<string> {
  fileCounter++;
  const { file_id } = await database.db
    .insertInto('recon.files')
    .values({
      name: `lineage-${fileCounter}.csv`,
      sha256: fileCounter.toString(16).padStart(64, 'a'),
      size_bytes: 1,
      compression: 'none',
      status: 'loaded',
      arrival: 'ingest',
    })
    .returning('file_id')
    .executeTakeFirstOrThrow();
  return file_id;
}

function insertTransaction(database: Database, id: string, fileId: string) {
  return database.db
    .insertInto('recon.transactions')
    .values({ transaction_id: id, file_id: fileId, line: 2, extra: '{}' })
    .execute();
}

/** The SQLSTATE and message a statement fails with. */
async function failure(work: Promise<unknown>): Promise<{ code: unknown; message: string }> {
  const error = await work.then(
    () => undefined,
    (caught: unknown) => caught as { code?: unknown; message: string },
  );
  expect(error, 'the statement should have failed').toBeDefined();
  return { code: error!.code, message: error!.message };
}

describe.each(BACKENDS)('lineage of recon.transactions to recon.files on %s', (backend) => {
  const skip = backend === 'postgres' && !hasPostgres;
  let testDb: TestDatabase;
  beforeAll(async () => {
    if (!skip) testDb = await createTestDatabase(backend);
  });
  afterAll(async () => testDb?.drop());

  it.skipIf(skip)('refuses a transaction whose file does not exist, on insert and on update', async () => {
    const { database } = testDb;
    const fileId = await insertFile(database);
    const missing = String(BigInt(fileId) + 1000n);

    expect(await failure(insertTransaction(database, 'L-missing', missing))).toEqual({
      code: '23503',
      message: `recon.transactions.file_id ${missing} is not a file of recon.files`,
    });
    await insertTransaction(database, 'L-kept', fileId);
    const moved = database.db
      .updateTable('recon.transactions')
      .set({ file_id: missing })
      .where('transaction_id', '=', 'L-kept')
      .execute();
    expect((await failure(moved)).code).toBe('23503');

    const rows = await database.db
      .selectFrom('recon.transactions')
      .select(['transaction_id', 'file_id'])
      .where('transaction_id', 'like', 'L-%')
      .execute();
    expect(rows).toEqual([{ transaction_id: 'L-kept', file_id: fileId }]);
  });

  it.skipIf(skip)('keeps a file that transactions point to, and lets an unreferenced one go', async () => {
    const { database } = testDb;
    const referenced = await insertFile(database);
    const unreferenced = await insertFile(database);
    await insertTransaction(database, 'K-1', referenced);

    const deleted = database.db.deleteFrom('recon.files').where('file_id', '=', referenced).execute();
    expect(await failure(deleted)).toEqual({
      code: '23503',
      message: `file ${referenced} of recon.files is the lineage of transactions in recon.transactions`,
    });
    const renumbered = sql`UPDATE recon.files SET file_id = DEFAULT WHERE file_id = ${referenced}`.execute(database.db);
    expect((await failure(renumbered)).code).toBe('23503');
    expect((await failure(sql`TRUNCATE recon.files CASCADE`.execute(database.db))).code).toBe('23503');

    await database.db.deleteFrom('recon.files').where('file_id', '=', unreferenced).execute();
    const files = await database.db
      .selectFrom('recon.files')
      .select('file_id')
      .where('file_id', 'in', [referenced, unreferenced])
      .execute();
    expect(files).toEqual([{ file_id: referenced }]);
  });
});
