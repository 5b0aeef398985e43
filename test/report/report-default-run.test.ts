import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/config.ts';
import { startNightlyRun } from '../../src/nightly/nightly-run.ts';
import { reconcile } from '../../src/reconcile/reconcile.ts';
import { loadRunReport } from '../../src/report/report-queries.ts';
import { renderTable } from '../../src/report/report-table.ts';
import { DAY, insertOrders } from '../reconcile/reconcile-scenario.ts';
import { expectReconError } from '../support/expect-recon-error.ts';
import { BACKENDS, createTestDatabase, hasPostgres, type TestDatabase } from '../support/test-database.ts';

const AS_OF = new Date('2026-11-26T02:30:00Z');
const SETTINGS = loadConfig({}).reconcile;

/**
 * Which run `recon report` shows unasked: the latest finished nightly run, or before there is one the latest run
 * over all orders; never a backfill or a run over a few named orders. Every run says what it was.
 */
describe.each(BACKENDS)('the run a report shows by default, on %s', (backend) => {
  const skip = backend === 'postgres' && !hasPostgres;
  let testDb: TestDatabase;
  beforeAll(async () => {
    if (skip) return;
    testDb = await createTestDatabase(backend);
    await insertOrders(
      testDb.database,
      ['D-1', 'D-2', 'D-3'].map((id) => ({
        id,
        amount: 100n,
        status: 'cancelled' as const,
        createdAt: new Date(AS_OF.getTime() - DAY),
      })),
    );
  });
  afterAll(async () => testDb?.drop());

  it.skipIf(skip)(
    'is the latest nightly run, or the latest run over all orders before one, and the header says which',
    async () => {
      const { database } = testDb;
      const named = await reconcile(database, {
        scope: { kind: 'orders', orderIds: ['D-1', 'D-2'] },
        asOf: AS_OF,
        ...SETTINGS,
      });
      expect(named).toMatchObject({ kind: 'manual', description: '2 orders' });
      await expectReconError(
        () => loadRunReport(database.db),
        'RUN_NOT_FOUND',
        'no nightly run and no run over all orders has finished yet',
      );
      expect((await loadRunReport(database.db, named.runId)).run).toMatchObject({
        runId: named.runId,
        choice: 'named',
        kind: 'manual',
        description: '2 orders',
      });

      const all = await reconcile(database, { scope: { kind: 'all' }, asOf: AS_OF, ...SETTINGS });
      expect((await loadRunReport(database.db)).run).toMatchObject({
        runId: all.runId,
        choice: 'latest_over_all_orders',
        description: 'all orders and unknown ORDERIDs',
      });

      const { run: nightlyRun } = await startNightlyRun(database.db, '2026-11-26', AS_OF);
      const nightly = await reconcile(database, {
        scope: { kind: 'orders', orderIds: ['D-1', 'D-2', 'D-3'] },
        origin: { kind: 'nightly', nightlyRunId: nightlyRun.nightlyRunId, runDate: nightlyRun.runDate },
        asOf: AS_OF,
        ...SETTINGS,
      });
      expect(nightly).toMatchObject({ kind: 'nightly', description: 'nightly run of 2026-11-26: 3 orders' });
      // A nightly run's ORDERIDs are its export requests', not copied again.
      expect(
        await database.db
          .selectFrom('recon.run_scope_orders')
          .select('order_id')
          .where('run_id', '=', nightly.runId)
          .execute(),
      ).toEqual([]);

      const backfill = await reconcile(database, {
        scope: { kind: 'orders', orderIds: ['D-3'] },
        origin: { kind: 'backfill' },
        asOf: AS_OF,
        ...SETTINGS,
      });
      expect(backfill).toMatchObject({ kind: 'backfill', description: '1 order' });
      const report = await loadRunReport(database.db);
      expect(report.run).toMatchObject({
        runId: nightly.runId,
        choice: 'latest_nightly',
        kind: 'nightly',
        nightlyRunId: nightlyRun.nightlyRunId,
        nightlyDate: '2026-11-26',
        description: 'nightly run of 2026-11-26: 3 orders',
        scope: { kind: 'orders', count: 3 },
      });
      expect(renderTable(report, [], { generatedAt: AS_OF }).split('\n')[0]).toBe(
        `Reconciliation run ${nightly.runId}: nightly run of 2026-11-26: 3 orders, as of 2026-11-26 02:30 UTC (the latest nightly run)`,
      );
      expect(
        renderTable(await loadRunReport(database.db, backfill.runId), [], { generatedAt: AS_OF }).split('\n')[0],
      ).toBe(`Reconciliation run ${backfill.runId}: backfill of 1 order, as of 2026-11-26 02:30 UTC`);
    },
  );
});
