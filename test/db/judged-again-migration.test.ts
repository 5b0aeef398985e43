import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrate, migrationsDir } from '../../src/db/migrate.ts';
import { BACKENDS, createTestDatabaseBefore, hasPostgres, type TestDatabase } from '../support/test-database.ts';

const MIGRATION = '0029_verdicts_judged_again.sql';

/**
 * Verdicts written before migration 0029 kept the lifecycle of the run that wrote them however many runs judged the
 * order since: the migration marks those a later finished run judged (over all orders, a creation date, named
 * orders, or a nightly run's requests), so that the views read them as moved on.
 */
describe.each(BACKENDS)('migration 0029 on verdicts of %s written before it', (backend) => {
  const skip = backend === 'postgres' && !hasPostgres;
  let testDb: TestDatabase;

  beforeAll(async () => {
    if (skip) return;
    testDb = await createTestDatabaseBefore(backend, MIGRATION);
  });
  afterAll(async () => {
    await testDb?.drop();
  });

  it.skipIf(skip)('marks the new and resolved verdicts a later finished run judged, and no other', async () => {
    await testDb.database.transaction((c) =>
      c.exec(`
        INSERT INTO recon.order_imports (import_id, source, name, status) OVERRIDING SYSTEM VALUE
        VALUES (1, 'file', 'orders.csv', 'loaded');
        INSERT INTO recon.orders (order_id, amount_minor, currency, status, refunded_minor, payment_method, created_at,
          import_id, line)
        VALUES ('A', 100, 'EUR', 'paid', 0, 'wallet', '2026-11-01', 1, 2), ('B', 100, 'EUR', 'paid', 0, 'wallet', '2026-11-01', 1, 3),
               ('C', 100, 'EUR', 'paid', 0, 'wallet', '2026-10-01', 1, 4), ('D', 100, 'EUR', 'paid', 0, 'wallet', '2026-11-01', 1, 5),
               ('E', 100, 'EUR', 'paid', 0, 'wallet', '2026-11-01', 1, 6);
        INSERT INTO recon.nightly_runs (nightly_run_id, run_date, as_of) OVERRIDING SYSTEM VALUE VALUES (1, '2026-11-03', '2026-11-03');
        INSERT INTO recon.export_requests (token, nightly_run_id, order_ids, compression, batch, attempt, state, expires_at)
        VALUES ('aaaaaaaaaaaaaaaaaaaaaa', 1, '{D}', 'gzip', 1, 1, 'ingested', now());
        INSERT INTO recon.reconciliation_runs (run_id, as_of, scope, kind, nightly_run_id, description, tolerance_minor,
          grace_hours, finished_at) OVERRIDING SYSTEM VALUE
        VALUES (1, '2026-11-02', '{"kind": "all"}', 'manual', NULL, 'all orders and unknown ORDERIDs', 0, 24, now()),
               (2, '2026-11-03', '{"kind": "orders", "count": 1}', 'backfill', NULL, '1 order', 0, 24, now()),
               (3, '2026-11-03', '{"kind": "orders", "count": 1}', 'nightly', 1, 'nightly run of 2026-11-03: 1 order', 0, 24, now()),
               (4, '2026-11-04', '{"kind": "created_since", "since": "2026-10-15T00:00:00.000Z"}', 'manual', NULL,
                'orders created since 2026-10-15T00:00:00.000Z', 0, 24, now()),
               (5, '2026-11-05', '{"kind": "all"}', 'manual', NULL, 'all orders and unknown ORDERIDs', 0, 24, NULL);
        INSERT INTO recon.run_scope_orders (run_id, order_id) VALUES (2, 'A');
        INSERT INTO recon.verdicts (run_id, order_id, known_order, status, lifecycle, first_seen_run_id, first_seen_at,
          expected_minor, settled_minor, delta_minor, currency, transaction_ids, explanation, recheck_at)
        VALUES
          -- judged again by the backfill of A (run 2)
          (1, 'A', true, 'missing_at_provider', 'new', 1, '2026-11-02', 100, 0, -100, 'EUR', '{}', '{}', NULL),
          -- judged again by the nightly run asking for D (run 3)
          (1, 'D', true, 'matched', 'resolved', NULL, NULL, 100, 100, 0, 'EUR', '{}', NULL, NULL),
          -- created before the creation date of run 4, and judged by no finished run after run 1: stays new
          (1, 'C', true, 'missing_at_provider', 'new', 1, '2026-11-02', 100, 0, -100, 'EUR', '{}', '{}', NULL),
          -- judged by run 4 (created since its date)
          (1, 'B', true, 'missing_at_provider', 'new', 1, '2026-11-02', 100, 0, -100, 'EUR', '{}', '{}', NULL),
          -- written by run 4 itself, then only the unfinished run 5 came: stays new
          (4, 'E', true, 'missing_at_provider', 'new', 4, '2026-11-04', 100, 0, -100, 'EUR', '{}', '{}', NULL);
      `),
    );
    expect(await migrate(testDb.database, { migrationsDir: migrationsDir() })).toContain(MIGRATION);
    const rows = await testDb.database.db
      .selectFrom('recon.verdicts')
      .select(['order_id', 'rejudged_run_id'])
      .orderBy('order_id')
      .execute();
    expect(rows).toEqual([
      { order_id: 'A', rejudged_run_id: '2' },
      { order_id: 'B', rejudged_run_id: '4' },
      { order_id: 'C', rejudged_run_id: null },
      { order_id: 'D', rejudged_run_id: '3' },
      { order_id: 'E', rejudged_run_id: null },
    ]);
  });
});
