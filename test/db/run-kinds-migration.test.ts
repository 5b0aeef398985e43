import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrate } from '../../src/db/migrate.ts';
import { BACKENDS, createTestDatabaseBefore, hasPostgres, type TestDatabase } from '../support/test-database.ts';

const RUN_KINDS_MIGRATION = '0016_run_kinds.sql';

/**
 * Runs recorded before runs had kinds kept every ORDERID of their scope in their row. Migrating gives each its kind
 * and description, moves named ORDERIDs out of the row (a nightly run's stay with its export requests), and keeps
 * the first 100 not-found ids with their count.
 */
describe.each(BACKENDS)('migrating runs to kinds on %s', (backend) => {
  const skip = backend === 'postgres' && !hasPostgres;
  let testDb: TestDatabase;

  beforeAll(async () => {
    if (skip) return;
    testDb = await createTestDatabaseBefore(backend, RUN_KINDS_MIGRATION);
  });
  afterAll(async () => {
    await testDb?.drop();
  });

  it.skipIf(skip)('gives every earlier run its kind and description, and no list of ORDERIDs in its row', async () => {
    const { database } = testDb;
    const nightlyIds = Array.from({ length: 1500 }, (_, index) => `N-${String(index).padStart(4, '0')}`);
    const notFound = Array.from({ length: 150 }, (_, index) => `GONE-${String(index).padStart(3, '0')}`);
    const runs = await sql<{
      run_id: string;
    }>`INSERT INTO recon.reconciliation_runs (as_of, scope, tolerance_minor, grace_hours, not_found)
      VALUES
        (now(), ${JSON.stringify({ kind: 'orders', order_ids: nightlyIds })}::jsonb, 0, 24, '{}'),
        (now(), ${JSON.stringify({ kind: 'orders', order_ids: ['B', 'A', 'B', ...notFound] })}::jsonb, 0, 24, ${notFound}::text[]),
        (now(), '{"kind": "all"}', 0, 24, '{}'),
        (now(), '{"kind": "created_since", "since": "2026-11-01T00:00:00.000Z"}', 0, 24, '{}')
      RETURNING run_id::text`.execute(database.db);
    const [nightly, named, all, since] = runs.rows.map((row) => row.run_id);
    await sql`INSERT INTO recon.nightly_runs (run_date, as_of, state, reconciliation_run_id) VALUES ('2026-11-20', now(), 'reconciled', ${nightly}::bigint)`.execute(
      database.db,
    );

    expect(await migrate(database)).toContain(RUN_KINDS_MIGRATION);

    const migrated = await database.db
      .selectFrom('recon.reconciliation_runs')
      .select([
        sql<string>`run_id::text`.as('run_id'),
        'kind',
        'description',
        'scope',
        'not_found_count',
        sql<number>`cardinality(not_found)`.as('kept'),
      ])
      .orderBy('run_id')
      .execute();
    expect(migrated).toEqual([
      {
        run_id: nightly,
        kind: 'nightly',
        description: 'nightly run of 2026-11-20: 1,500 orders',
        scope: { kind: 'orders', count: 1500 },
        not_found_count: 0,
        kept: 0,
      },
      {
        run_id: named,
        kind: 'manual',
        description: '152 orders',
        scope: { kind: 'orders', count: 152 },
        not_found_count: 150,
        kept: 100,
      },
      {
        run_id: all,
        kind: 'manual',
        description: 'all orders and unknown ORDERIDs',
        scope: { kind: 'all' },
        not_found_count: 0,
        kept: 0,
      },
      {
        run_id: since,
        kind: 'manual',
        description: 'orders created since 2026-11-01T00:00:00.000Z',
        scope: { kind: 'created_since', since: '2026-11-01T00:00:00.000Z' },
        not_found_count: 0,
        kept: 0,
      },
    ]);
    const kept = await database.db
      .selectFrom('recon.run_scope_orders')
      .select(['run_id', 'order_id'])
      .orderBy('order_id')
      .execute();
    expect(kept.map((row) => String(row.run_id))).toEqual(Array(152).fill(named));
    expect(kept.slice(0, 2).map((row) => row.order_id)).toEqual(['A', 'B']);
  });
});
