import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ingestFiles } from '../../pipelines/ingest-files.ts';
import { loadConfig } from '../../src/config/config.ts';
import type { Database } from '../../src/db/database.ts';
import { openDatabase } from '../../src/db/open-database.ts';
import { holdTransaction, lockWaiters } from '../support/held-transaction.ts';
import { createTestDatabase, hasPostgres, type TestDatabase } from '../support/test-database.ts';
import { waitUntil } from '../support/wait-until.ts';

/**
 * Two workers ingesting overlapping exports at once (two nightly batches naming the same transactions) must both
 * succeed, with the rows of one load after the other, without a deadlock. The race is forced: a held lock on
 * recon.transactions stops the first merge part-way while the second load reaches its own merge, then lets both go.
 * PostgreSQL only: PGlite has one connection, so its loads never overlap.
 */
const ROWS = 20_000;
const limits = loadConfig({}).limits;

function exportCsv(order: 'ascending' | 'descending', amount: string): Buffer {
  const ids = Array.from({ length: ROWS }, (_, i) => `OV${String(i + 1).padStart(6, '0')}`);
  if (order === 'descending') ids.reverse();
  return Buffer.from(
    [
      'TRANSACTIONID;ORDERID;DATE;AMOUNT;CURRENCY;EXECCODE',
      ...ids.map((id) => `${id};O-${id};2026-11-20 12:00:00;${amount};EUR;0000`),
      '',
    ].join('\n'),
  );
}

describe.skipIf(!hasPostgres)('overlapping ingests at once (PostgreSQL only)', () => {
  let testDb: TestDatabase;
  let other: Database;
  let dir: string;

  beforeAll(async () => {
    testDb = await createTestDatabase('postgres');
    other = await openDatabase({ databaseUrl: testDb.env.DATABASE_URL, dataDir: testDb.env.RECON_DATA_DIR });
    dir = await mkdtemp(path.join(os.tmpdir(), 'recon-overlap-'));
  });
  afterAll(async () => {
    await other?.close();
    await testDb?.drop();
    await rm(dir, { recursive: true, force: true });
  });

  it('both load, without a deadlock, to the rows of one after the other', async () => {
    const ascending = path.join(dir, 'batch-a.csv');
    const descending = path.join(dir, 'batch-b.csv');
    await writeFile(ascending, exportCsv('ascending', '1.00'));
    await writeFile(descending, exportCsv('descending', '2.00'));

    const held = await holdTransaction(testDb.env.DATABASE_URL!, [
      'LOCK TABLE recon.transactions IN SHARE ROW EXCLUSIVE MODE',
    ]);
    let results;
    try {
      const loads = [
        ingestFiles(testDb.database, [ascending], { timezone: 'UTC', limits }),
        ingestFiles(other, [descending], { timezone: 'UTC', limits }),
      ];
      // One load is in its merge, held by the lock on recon.transactions; the other waits its turn to merge.
      await waitUntil('one load merging, the other waiting its turn', async () => {
        const waiting = (await lockWaiters(testDb.database.db)).map((waiter) => waiter.relation);
        return waiting.length === 2 && waiting.includes('recon.transactions') && waiting.includes(null);
      });
      await held.release();
      results = await Promise.all(loads);
    } finally {
      await held.release();
    }
    expect(results.map(([result]) => result!.status)).toEqual(['loaded', 'loaded']);

    // Every row is the last committed file's: as if the two had loaded one after the other.
    const rows = await testDb.database.db
      .selectFrom('recon.transactions')
      .select(['amount_minor', 'file_id'])
      .select((eb) => eb.fn.countAll<string>().as('rows'))
      .groupBy(['amount_minor', 'file_id'])
      .execute();
    expect(rows).toHaveLength(1);
    expect(Number(rows[0]!.rows)).toBe(ROWS);
    const last = results.map(([result]) => result!).find((result) => result.fileId === String(rows[0]!.file_id))!;
    expect(rows[0]!.amount_minor).toBe(last.file.endsWith('batch-a.csv') ? '100' : '200');
  });
});
