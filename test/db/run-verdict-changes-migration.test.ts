import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrate, migrationsDir } from '../../src/db/migrate.ts';
import { BACKENDS, createTestDatabaseBefore, hasPostgres, type TestDatabase } from '../support/test-database.ts';

const MIGRATION = '0036_run_verdict_changes.sql';

/**
 * Before migration 0036 a run written slice by slice replaced the current verdicts as it went, and the views read
 * the replaced versions from the history while it was unfinished. A run cut short so must not leave its versions
 * current once the views read recon.verdicts alone: the migration puts back what it replaced and removed.
 */
describe.each(BACKENDS)('migration 0036 on a run cut short before it, on %s', (backend) => {
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
    'puts back the versions the unfinished run replaced or removed, and drops those it wrote',
    async () => {
      await testDb.database.transaction((c) =>
        c.exec(`
        INSERT INTO recon.reconciliation_runs (run_id, as_of, scope, kind, description, tolerance_minor, grace_hours,
          finished_at) OVERRIDING SYSTEM VALUE
        VALUES (1, '2026-11-02', '{"kind": "all"}', 'manual', 'all orders and unknown ORDERIDs', 0, 24, now()),
               (2, '2026-11-03', '{"kind": "all"}', 'manual', 'all orders and unknown ORDERIDs', 0, 24, NULL);
        INSERT INTO recon.verdicts (run_id, order_id, known_order, status, lifecycle, first_seen_run_id, first_seen_at,
          expected_minor, settled_minor, delta_minor, currency, transaction_ids, explanation, recheck_at, at_risk_minor)
        VALUES
          -- kept by run 2: untouched
          (1, 'K', true, 'matched', NULL, NULL, NULL, 100, 100, 0, 'EUR', '{}', NULL, NULL, 0),
          -- replaced by run 2, whose version is current
          (2, 'A', true, 'amount_mismatch', 'new', 2, '2026-11-03', 100, 90, -10, 'EUR', '{}', '{}', NULL, 10),
          -- new in run 2
          (2, 'C', true, 'missing_at_provider', 'new', 2, '2026-11-03', 100, 0, -100, 'EUR', '{}', '{}', NULL, 100);
        INSERT INTO recon.verdict_history (run_id, order_id, known_order, status, lifecycle, first_seen_run_id,
          first_seen_at, expected_minor, settled_minor, delta_minor, currency, transaction_ids, explanation, until_run_id,
          at_risk_minor)
        VALUES
          (1, 'A', true, 'matched', NULL, NULL, NULL, 100, 100, 0, 'EUR', '{}', NULL, 2, 0),
          -- removed by run 2
          (1, 'U', false, 'unknown_order', 'new', 1, '2026-11-02', 0, 5, 5, 'EUR', '{}', '{}', 2, 5);
      `),
      );
      expect(await migrate(testDb.database, { migrationsDir: migrationsDir() })).toContain(MIGRATION);
      const verdicts = await testDb.database.db
        .selectFrom('recon.verdicts')
        .select(['order_id', 'run_id', 'status', 'recheck_at'])
        .orderBy('order_id')
        .execute();
      expect(verdicts).toEqual([
        // Looked at by the next run whatever happened.
        { order_id: 'A', run_id: '1', status: 'matched', recheck_at: -Infinity },
        { order_id: 'K', run_id: '1', status: 'matched', recheck_at: null },
        { order_id: 'U', run_id: '1', status: 'unknown_order', recheck_at: -Infinity },
      ]);
      expect(await testDb.database.db.selectFrom('recon.verdict_history').select('order_id').execute()).toEqual([]);
      const current = await testDb.database.db
        .selectFrom('reporting.reconciliation')
        .select(['order_id', 'status'])
        .orderBy('order_id')
        .execute();
      expect(current).toEqual([
        { order_id: 'A', status: 'matched' },
        { order_id: 'K', status: 'matched' },
        { order_id: 'U', status: 'unknown_order' },
      ]);
    },
  );
});
