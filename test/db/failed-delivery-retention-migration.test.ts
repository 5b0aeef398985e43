import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrate } from '../../src/db/migrate.ts';
import { BACKENDS, createTestDatabaseBefore, hasPostgres, type TestDatabase } from '../support/test-database.ts';

const MIGRATION = '0031_failed_delivery_retention.sql';

/**
 * Deliveries that failed before recon recorded when: the migration dates each by what it has, so that the bytes of
 * failed deliveries kept until then fall under their own retention too.
 */
describe.each(BACKENDS)('migrating failed deliveries to their retention on %s', (backend) => {
  const skip = backend === 'postgres' && !hasPostgres;
  let testDb: TestDatabase;

  beforeAll(async () => {
    if (skip) return;
    testDb = await createTestDatabaseBefore(backend, MIGRATION);
  });
  afterAll(async () => {
    await testDb?.drop();
  });

  it.skipIf(skip)(
    'dates each failed delivery by its quarantine, else its failed file, else its arrival; the others not at all',
    async () => {
      const { db } = testDb.database;
      const one = async (query: ReturnType<typeof sql<{ id: string }>>) => (await query.execute(db)).rows[0]!.id;
      let requests = 0;
      // One delivery per export request.
      const delivery = async (state: string, receivedAt: string, quarantinedAt: string | null) => {
        const request =
          await one(sql`INSERT INTO recon.export_requests (token, order_ids, compression, state, expires_at)
          VALUES (${`legacytoken${++requests}`}, '{O1}', 'gzip', 'failed', now()) RETURNING request_id::text AS id`);
        return one(sql`INSERT INTO recon.deliveries (request_id, received_at, sha256, bytes, state, quarantined_at)
          VALUES (${request}::bigint, ${receivedAt}::timestamptz, ${'a'.repeat(64)}, 10, ${state},
            ${quarantinedAt}::timestamptz)
          RETURNING delivery_id::text AS id`);
      };
      const quarantined = await delivery('failed', '2026-10-01T08:00:00Z', '2026-10-01T09:30:00Z');
      const badFile = await delivery('failed', '2026-10-02T08:00:00Z', null);
      const unreadable = await delivery('failed', '2026-10-03T08:00:00Z', null);
      const ingested = await delivery('ingested', '2026-10-04T08:00:00Z', null);
      const waiting = await delivery('received', '2026-10-05T08:00:00Z', null);
      const file = await one(sql`INSERT INTO recon.files (name, sha256, size_bytes, compression, status, finished_at,
          error_code, error, arrival, delivery_id)
        VALUES ('bad.csv.gz', ${'a'.repeat(64)}, 10, 'gzip', 'failed', '2026-10-02T08:05:00Z', 'ARCHIVE_CORRUPT',
          'bad.csv.gz: truncated', 'delivery', ${badFile}::bigint)
        RETURNING file_id::text AS id`);
      await sql`UPDATE recon.deliveries SET file_id = ${file}::bigint WHERE delivery_id = ${badFile}::bigint`.execute(
        db,
      );

      expect(await migrate(testDb.database)).toContain(MIGRATION);

      const rows = await db
        .selectFrom('recon.deliveries')
        .select([sql<string>`delivery_id::text`.as('id'), 'failed_at'])
        .orderBy('delivery_id')
        .execute();
      expect(Object.fromEntries(rows.map((row) => [row.id, row.failed_at]))).toEqual({
        [quarantined]: new Date('2026-10-01T09:30:00Z'),
        [badFile]: new Date('2026-10-02T08:05:00Z'),
        [unreadable]: new Date('2026-10-03T08:00:00Z'),
        [ingested]: null,
        [waiting]: null,
      });
      // From now on a failed delivery always says when it failed.
      await expect(
        sql`UPDATE recon.deliveries SET failed_at = NULL WHERE delivery_id = ${badFile}::bigint`.execute(db),
      ).rejects.toThrow(/deliveries_failed_at_iff_failed/);
    },
  );
});
