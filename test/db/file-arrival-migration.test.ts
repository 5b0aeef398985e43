import { copyFile, mkdtemp, readdir, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Connection } from '../../src/db/database.ts';
import { migrate, migrationsDir } from '../../src/db/migrate.ts';
import { deliveryFileName, readDeliveryFacts } from '../../src/nightly/delivery-file-name.ts';
import { BACKENDS, createTestDatabase, hasPostgres, type TestDatabase } from '../support/test-database.ts';

const MIGRATION = '0015_file_arrival.sql';

interface LegacyFile {
  readonly name: string;
  readonly sha256: string;
  readonly status: 'loaded' | 'failed';
}

/**
 * Files recorded before migration 0015, delivered ones under the temporary path they were spooled to: the migration
 * tells how each arrived and renames the delivered ones as recon names them now.
 */
describe.each(BACKENDS)('migration 0015 on the files of %s recorded before it', (backend) => {
  const skip = backend === 'postgres' && !hasPostgres;
  let before: string;
  let testDb: TestDatabase;

  beforeAll(async () => {
    if (skip) return;
    before = await mkdtemp(path.join(os.tmpdir(), 'recon-migrations-before-'));
    for (const name of await readdir(migrationsDir())) {
      if (name < MIGRATION) await copyFile(path.join(migrationsDir(), name), path.join(before, name));
    }
    testDb = await createTestDatabase(backend, { migrationsDir: before });
  });
  afterAll(async () => {
    await testDb?.drop();
    if (before) await rm(before, { recursive: true, force: true });
  });

  const sql = <Row>(text: string, params: unknown[] = []) =>
    testDb.database.transaction(async (connection: Connection) => (await connection.query<Row>(text, params)).rows);
  const one = async (text: string, params: unknown[] = []) =>
    String(Object.values((await sql<Record<string, unknown>>(text, params))[0]!)[0]);

  async function request(nightlyRunId: string | null, batch: number | null, attempt: number): Promise<string> {
    return one(
      `INSERT INTO recon.export_requests (token, nightly_run_id, order_ids, compression, batch, attempt, state, expires_at)
       VALUES ($1, $2, '{O1}', 'gzip', $3, $4, 'ingested', now()) RETURNING request_id`,
      [`legacy${Math.random().toString(36).slice(2, 10)}`, nightlyRunId, batch, attempt],
    );
  }
  const delivery = (requestId: string, sha256: string, filename: string | null) =>
    one(
      "INSERT INTO recon.deliveries (request_id, sha256, bytes, filename, state) VALUES ($1, $2, 10, $3, 'ingested') RETURNING delivery_id",
      [requestId, sha256, filename],
    );
  const file = (legacy: LegacyFile) =>
    one(
      `INSERT INTO recon.files (name, sha256, size_bytes, compression, status, error_code, error)
     VALUES ($1, $2, 10, 'gzip', $3, $4, $5) RETURNING file_id`,
      [
        legacy.name,
        legacy.sha256,
        legacy.status,
        legacy.status === 'failed' ? 'ARCHIVE_CORRUPT' : null,
        legacy.status === 'failed' ? `${legacy.name}: truncated` : null,
      ],
    );

  it.skipIf(skip)(
    'records how each file arrived, and names the delivered ones by their run, batch, attempt, filename and delivery',
    async () => {
      const sha = (c: string) => c.repeat(64);
      const nightlyRunId = await one(
        "INSERT INTO recon.nightly_runs (run_date, as_of) VALUES ('2026-11-20', now()) RETURNING nightly_run_id",
      );
      const nightly = await delivery(await request(nightlyRunId, 4, 2), sha('a'), '../x/transactions 20.csv.gz');
      const raw = await delivery(await request(null, null, 1), sha('b'), null);
      // The same bytes again, later: a duplicate, which pointed at the first delivery's file and had none of its own.
      const duplicate = await delivery(await request(nightlyRunId, 4, 3), sha('a'), 'again.csv.gz');

      const files = {
        failedAttempt: await file({
          name: `/tmp/recon-4242-delivery-AbC123/delivery-${nightly}-transactions_20.csv.gz`,
          sha256: sha('a'),
          status: 'failed',
        }),
        nightly: await file({
          name: `/var/tmp/recon-4243-delivery-XyZ789/delivery-${nightly}-transactions_20.csv.gz`,
          sha256: sha('a'),
          status: 'loaded',
        }),
        // Spooled by a version that named neither its folder's owner nor the filename.
        raw: await file({ name: `/tmp/recon-delivery-Old123/delivery-${raw}`, sha256: sha('b'), status: 'loaded' }),
        // Looks like a spooled delivery but holds other bytes: a file someone named so and gave recon ingest.
        lookalike: await file({ name: `/home/acct/delivery-${nightly}-copy.csv`, sha256: sha('c'), status: 'loaded' }),
        huge: await file({ name: '/home/acct/delivery-99999999999999999999999', sha256: sha('d'), status: 'loaded' }),
        backfill: await file({
          name: 'backfill:getTransactions 2026-11-20T15:00:03Z ORD-1',
          sha256: sha('e'),
          status: 'loaded',
        }),
        ingest: await file({ name: 'exports/2026-11-19.csv', sha256: sha('f'), status: 'loaded' }),
      };
      await sql('UPDATE recon.deliveries SET file_id = $1 WHERE delivery_id IN ($2, $3)', [
        files.nightly,
        nightly,
        duplicate,
      ]);
      await sql('UPDATE recon.deliveries SET file_id = $1 WHERE delivery_id = $2', [files.raw, raw]);
      // The failure its first attempt recorded, beside the failed file's error.
      const failedPath = `/tmp/recon-4242-delivery-AbC123/delivery-${nightly}-transactions_20.csv.gz`;
      await sql('UPDATE recon.deliveries SET failure = $1 WHERE delivery_id = $2', [
        `quarantined after 2 attempts failing the same way: ${failedPath}: truncated`,
        nightly,
      ]);
      await sql(
        'UPDATE recon.export_requests SET failure = $1 WHERE request_id = (SELECT request_id FROM recon.deliveries WHERE delivery_id = $2)',
        [`${failedPath}: truncated`, nightly],
      );

      await copyFile(path.join(migrationsDir(), MIGRATION), path.join(before, MIGRATION));
      expect(await migrate(testDb.database, { migrationsDir: before, definitionsRoot: null })).toEqual([MIGRATION]);

      const nameOf = async (deliveryId: string) =>
        deliveryFileName(await readDeliveryFacts(testDb.database.db, deliveryId));
      expect(await nameOf(nightly)).toBe(
        `nightly 2026-11-20 batch 4 attempt 2: transactions_20.csv.gz (delivery ${nightly})`,
      );
      expect(await nameOf(raw)).toMatch(new RegExp(`^export request \\d+ \\(delivery ${raw}\\)$`));
      const rows = await testDb.database.db
        .selectFrom('recon.files')
        .select(['file_id', 'name', 'arrival', 'delivery_id'])
        .orderBy('file_id')
        .execute();
      expect(rows).toEqual([
        { file_id: files.failedAttempt, name: await nameOf(nightly), arrival: 'delivery', delivery_id: nightly },
        { file_id: files.nightly, name: await nameOf(nightly), arrival: 'delivery', delivery_id: nightly },
        { file_id: files.raw, name: await nameOf(raw), arrival: 'delivery', delivery_id: raw },
        {
          file_id: files.lookalike,
          name: `/home/acct/delivery-${nightly}-copy.csv`,
          arrival: 'ingest',
          delivery_id: null,
        },
        {
          file_id: files.huge,
          name: '/home/acct/delivery-99999999999999999999999',
          arrival: 'ingest',
          delivery_id: null,
        },
        {
          file_id: files.backfill,
          name: 'backfill:getTransactions 2026-11-20T15:00:03Z ORD-1',
          arrival: 'backfill',
          delivery_id: null,
        },
        { file_id: files.ingest, name: 'exports/2026-11-19.csv', arrival: 'ingest', delivery_id: null },
      ]);
      // What was said of the failed attempt names the file as it is named now.
      const failed = await testDb.database.db
        .selectFrom('recon.files as f')
        .innerJoin('recon.deliveries as d', 'd.delivery_id', 'f.delivery_id')
        .innerJoin('recon.export_requests as r', 'r.request_id', 'd.request_id')
        .select(['f.error', 'd.failure as delivery_failure', 'r.failure as request_failure'])
        .where('f.file_id', '=', files.failedAttempt)
        .executeTakeFirstOrThrow();
      expect(failed).toEqual({
        error: `${await nameOf(nightly)}: truncated`,
        delivery_failure: `quarantined after 2 attempts failing the same way: ${await nameOf(nightly)}: truncated`,
        request_failure: `${await nameOf(nightly)}: truncated`,
      });
    },
  );

  it.skipIf(skip)('leaves no file without an arrival, nor a delivered one without its delivery', async () => {
    await expect(
      sql(
        "INSERT INTO recon.files (name, sha256, size_bytes, compression, status) VALUES ('x', $1, 1, 'none', 'loaded')",
        ['0'.repeat(64)],
      ),
    ).rejects.toThrow(/arrival/);
    await expect(
      sql(
        "INSERT INTO recon.files (name, sha256, size_bytes, compression, status, arrival) VALUES ('x', $1, 1, 'none', 'loaded', 'delivery')",
        ['0'.repeat(64)],
      ),
    ).rejects.toThrow(/files_delivery_check/);
  });
});
