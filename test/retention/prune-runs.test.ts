import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { reconcile, type RunSummary } from '../../src/reconcile/reconcile.ts';
import { RECONCILE_LOCK } from '../../src/reconcile/reconcile-lock.ts';
import { loadRunReport, openExceptionPages } from '../../src/report/report-queries.ts';
import { reportWarnings } from '../../src/report/run-report.ts';
import { pruneRuns } from '../../src/retention/prune-runs.ts';
import { holdTransaction, lockWaiters } from '../support/held-transaction.ts';
import { BACKENDS, createTestDatabase, hasPostgres, type TestDatabase } from '../support/test-database.ts';
import { waitUntil } from '../support/wait-until.ts';
import { ago, DAY, HOUR, ingestTransactions, insertOrders } from '../reconcile/reconcile-scenario.ts';

const START = new Date('2026-06-01T12:00:00Z');
const RETENTION_DAYS = 800;

describe.each(BACKENDS)('pruning runs on %s', (backend) => {
  const skip = backend === 'postgres' && !hasPostgres;
  let testDb: TestDatabase;
  let tmp: string;
  beforeAll(async () => {
    if (skip) return;
    tmp = await mkdtemp(path.join(os.tmpdir(), 'recon-prune-runs-'));
  });
  afterAll(async () => {
    if (tmp) await rm(tmp, { recursive: true, force: true });
  });

  const db = () => testDb.database.db;

  /**
   * Six runs over all orders, one change before each; the first three started long ago (their started_at moved
   * back past the retention), the last three recently.
   */
  async function history(prefix: string): Promise<RunSummary[]> {
    const id = (i: number) => `${prefix}${i}`;
    await insertOrders(
      testDb.database,
      [0, 1, 2, 3].map((i) => ({ id: id(i), amount: 1000n, status: 'paid' as const, createdAt: ago(START, 2 * DAY) })),
    );
    await ingestTransactions(testDb.database, tmp, [
      { id: `${id(0)}-P`, orderId: id(0), type: 'payment', amount: '10.00', exec: '0000', at: ago(START, DAY) },
      { id: `${id(1)}-P`, orderId: id(1), type: 'payment', amount: '9.00', exec: '0000', at: ago(START, DAY) },
    ]);
    const runs: RunSummary[] = [];
    for (let day = 0; day < 6; day++) {
      const at = new Date(START.getTime() + day * DAY);
      if (day === 2) {
        await ingestTransactions(testDb.database, tmp, [
          { id: `${id(2)}-P`, orderId: id(2), type: 'payment', amount: '10.00', exec: '0000', at },
        ]);
      }
      if (day === 4)
        await insertOrders(testDb.database, [
          { id: id(1), amount: 900n, status: 'paid', createdAt: ago(START, 2 * DAY) },
        ]);
      runs.push(
        await reconcile(testDb.database, { scope: { kind: 'all' }, asOf: at, toleranceMinor: 0n, graceHours: 24 }),
      );
    }
    for (const [index, run] of runs.slice(0, 3).entries()) {
      await sql`UPDATE recon.reconciliation_runs SET started_at = now() - make_interval(days => ${RETENTION_DAYS + 30 - index})
        WHERE run_id = ${run.runId}::bigint`.execute(db());
    }
    return runs;
  }

  async function reportOf(runId: string) {
    const report = await loadRunReport(db(), runId);
    const exceptions = [];
    for await (const page of openExceptionPages(db(), runId)) exceptions.push(...page);
    return { report, exceptions };
  }

  const current = () =>
    db()
      .selectFrom('reporting.reconciliation')
      .select(['order_id', 'status', 'lifecycle', 'first_seen', 'expected_minor', 'settled_minor'])
      .select(sql<string>`run_id::text`.as('run_id'))
      .orderBy('order_id')
      .execute();

  const tableCounts = async () =>
    (
      await sql<{ runs: number; history: number; current: number; totals: number }>`SELECT
        (SELECT count(*)::integer FROM recon.reconciliation_runs) AS runs,
        (SELECT count(*)::integer FROM recon.verdict_history) AS history,
        (SELECT count(*)::integer FROM recon.verdicts) AS current,
        (SELECT count(*)::integer FROM recon.run_totals) + (SELECT count(*)::integer FROM recon.run_status_totals)
          + (SELECT count(*)::integer FROM recon.run_account_totals) AS totals`.execute(db())
    ).rows[0]!;

  const cutoff = () => new Date(Date.now() - RETENTION_DAYS * DAY);

  it.skipIf(skip)(
    'removes what only old runs need: retained runs report the same, every order keeps its verdict and first seen',
    async () => {
      testDb = await createTestDatabase(backend);
      try {
        const runs = await history('P1-');
        const kept = runs.slice(3);
        const reportsBefore = await Promise.all(kept.map((run) => reportOf(run.runId)));
        const currentBefore = await current();
        const before = await tableCounts();

        const planned = await pruneRuns(db(), { cutoff: cutoff(), dryRun: true, batchSize: 2 });
        expect(await tableCounts()).toEqual(before);
        expect(planned.runs).toBe(3);
        expect(planned.verdictVersions).toBeGreaterThan(0);
        expect(planned.runTotals).toBeGreaterThan(0);

        const pruned = await pruneRuns(db(), { cutoff: cutoff(), dryRun: false, batchSize: 2 });
        expect(pruned).toEqual(planned);
        const after = await tableCounts();
        expect(after.history).toBe(before.history - pruned.verdictVersions);
        expect(after.totals).toBe(before.totals - pruned.runTotals);

        expect(await current()).toEqual(currentBefore);
        for (const [index, run] of kept.entries()) expect(await reportOf(run.runId)).toEqual(reportsBefore[index]);
        // Old runs a current verdict holds from stay, marked; the others are gone.
        const oldIds = runs.slice(0, 3).map((run) => run.runId);
        const { rows: oldRows } = await sql<{ run_id: string; history_pruned_at: Date | null }>`
          SELECT run_id::text, history_pruned_at FROM reporting.runs WHERE run_id = ANY (${oldIds}::bigint[])`.execute(
          db(),
        );
        const holders = new Set(currentBefore.map((row) => row.run_id));
        expect(oldRows.map((row) => row.run_id).sort()).toEqual(
          runs
            .slice(0, 3)
            .map((run) => run.runId)
            .filter((runId) => holders.has(runId))
            .sort(),
        );
        for (const row of oldRows) {
          expect(row.history_pruned_at).not.toBeNull();
          expect(reportWarnings(await loadRunReport(db(), row.run_id))[0]).toMatch(
            new RegExp(
              `^run ${row.run_id}'s history was pruned on \\d{4}-\\d{2}-\\d{2} \\(RECON_RUN_RETENTION_DAYS\\)`,
            ),
          );
        }
        expect(oldRows.length).toBeGreaterThan(0);
        // A second prune has nothing left to do.
        expect(await pruneRuns(db(), { cutoff: cutoff(), dryRun: false, batchSize: 2 })).toEqual({
          runs: 0,
          verdictVersions: 0,
          runTotals: 0,
          scopeOrders: 0,
        });
      } finally {
        await testDb.drop();
      }
    },
  );

  it.skipIf(skip)(
    'keeps a run in flight that started before the cutoff, and every run after it, however old',
    async () => {
      testDb = await createTestDatabase(backend);
      try {
        const runs = await history('P9-');
        // A sliced run's row is committed before it finishes: the second of the old runs, as if it were still writing.
        await sql`UPDATE recon.reconciliation_runs SET finished_at = NULL WHERE run_id = ${runs[1]!.runId}::bigint`.execute(
          db(),
        );
        const thirdBefore = await reportOf(runs[2]!.runId);
        const before = await tableCounts();

        const pruned = await pruneRuns(db(), { cutoff: cutoff(), dryRun: false, batchSize: 2 });
        expect(pruned.runs).toBe(1);
        const { rows } = await sql<{ run_id: string; pruned: boolean }>`SELECT run_id::text,
            history_pruned_at IS NOT NULL AS pruned
          FROM reporting.runs WHERE run_id = ANY (${runs.slice(1, 3).map((run) => run.runId)}::bigint[])
          ORDER BY run_id`.execute(db());
        expect(rows).toEqual([
          { run_id: runs[1]!.runId, pruned: false },
          { run_id: runs[2]!.runId, pruned: false },
        ]);
        expect(await reportOf(runs[2]!.runId)).toEqual(thirdBefore);
        expect((await tableCounts()).totals).toBe(before.totals - pruned.runTotals);
      } finally {
        await testDb.drop();
      }
    },
  );

  it.skipIf(skip || backend === 'postgres')(
    'on its one connection, takes turns with a reconciliation, an ingest and a report started at the same time',
    async () => {
      testDb = await createTestDatabase(backend);
      try {
        const runs = await history('P3-');
        const reportBefore = await reportOf(runs.at(-1)!.runId);
        const [pruned, , report, next] = await Promise.all([
          pruneRuns(db(), { cutoff: cutoff(), dryRun: false, batchSize: 1 }),
          ingestTransactions(testDb.database, tmp, [
            {
              id: 'P3-3-P',
              orderId: 'P3-3',
              type: 'payment',
              amount: '10.00',
              exec: '0000',
              at: new Date(START.getTime() + 6 * DAY),
            },
          ]),
          reportOf(runs.at(-1)!.runId),
          reconcile(testDb.database, {
            scope: { kind: 'all' },
            asOf: new Date(START.getTime() + 6 * DAY + HOUR),
            toleranceMinor: 0n,
            graceHours: 24,
          }),
        ]);
        expect(pruned.runs).toBe(3);
        expect(report).toEqual(reportBefore);
        expect(await reportOf(runs.at(-1)!.runId)).toEqual(reportBefore);
        expect((await loadRunReport(db(), next.runId)).verdictGroups.reduce((n, g) => n + g.verdicts, 0)).toBe(
          next.ordersInScope,
        );
      } finally {
        await testDb.drop();
      }
    },
  );

  it.skipIf(skip || backend === 'pglite')(
    'waits its turn beside a reconciliation, while an ingest and a report go on beside it',
    async () => {
      testDb = await createTestDatabase(backend);
      try {
        const runs = await history('P2-');
        const reportBefore = await reportOf(runs.at(-1)!.runId);
        // A reconciliation in progress holds the lock every writer of verdicts takes.
        const running = await holdTransaction(testDb.env.DATABASE_URL!, [
          `SELECT pg_advisory_xact_lock(${RECONCILE_LOCK})`,
        ]);
        let pruneDone = false;
        const prune = pruneRuns(db(), { cutoff: cutoff(), dryRun: false, batchSize: 1 }).finally(() => {
          pruneDone = true;
        });
        try {
          await waitUntil('the prune to wait for the reconciliation', async () =>
            (await lockWaiters(db())).some((waiter) => waiter.query.includes('pg_advisory_xact_lock')),
          );
          // Ingest and reports do not wait for it.
          await ingestTransactions(testDb.database, tmp, [
            {
              id: 'P2-3-P',
              orderId: 'P2-3',
              type: 'payment',
              amount: '10.00',
              exec: '0000',
              at: new Date(START.getTime() + 6 * DAY),
            },
          ]);
          expect(await reportOf(runs.at(-1)!.runId)).toEqual(reportBefore);
          expect(pruneDone).toBe(false);
        } finally {
          await running.release();
        }
        const pruned = await prune;
        expect(pruned.runs).toBe(3);
        // The next run after the prune takes the ingested payment into account and reports whole.
        const next = await reconcile(testDb.database, {
          scope: { kind: 'all' },
          asOf: new Date(START.getTime() + 6 * DAY + HOUR),
          toleranceMinor: 0n,
          graceHours: 24,
        });
        expect(next.counts.missing_at_provider).toBe(0);
        expect((await loadRunReport(db(), next.runId)).verdictGroups.reduce((n, g) => n + g.verdicts, 0)).toBe(
          next.ordersInScope,
        );
      } finally {
        await testDb.drop();
      }
    },
  );

  /** Every run of the history started long before the retention: all of them are old. */
  async function allOld(): Promise<void> {
    await sql`UPDATE recon.reconciliation_runs SET started_at = now() - make_interval(days => ${RETENTION_DAYS + 60})`.execute(
      db(),
    );
  }

  it.skipIf(skip)(
    'a run after its base run was pruned reads every order again, since what it would copy from the base is gone',
    async () => {
      testDb = await createTestDatabase(backend);
      try {
        await history('P6-');
        await allOld();
        expect((await pruneRuns(db(), { cutoff: cutoff(), dryRun: false, batchSize: 2 })).runs).toBe(6);
        const options = { scope: { kind: 'all' as const }, toleranceMinor: 0n, graceHours: 24 };
        const perAccount = async (runId: string) =>
          (
            await sql<Record<string, unknown>>`SELECT identifier, currency, orders, transactions,
              paid_minor::text AS paid_minor FROM recon.run_account_totals WHERE run_id = ${runId}::bigint
              ORDER BY identifier, currency`.execute(db())
          ).rows;
        // Nothing changed since the last run, whose totals the prune removed.
        const next = await reconcile(testDb.database, { ...options, asOf: new Date(START.getTime() + 5 * DAY) });
        expect(next.verdictsComputed).toBe(4);
        const full = await reconcile(testDb.database, {
          ...options,
          asOf: new Date(START.getTime() + 5 * DAY),
          full: true,
        });
        expect(await perAccount(next.runId)).toEqual(await perAccount(full.runId));
        expect(await perAccount(next.runId)).toEqual([
          { identifier: null, currency: 'EUR', orders: 3, transactions: 3, paid_minor: '2900' },
        ]);
      } finally {
        await testDb.drop();
      }
    },
  );

  it.skipIf(skip)(
    'an exception judged again by the last run over all orders stays persisting when that run goes',
    async () => {
      testDb = await createTestDatabase(backend);
      try {
        await insertOrders(testDb.database, [
          { id: 'P7-0', amount: 1000n, status: 'paid', createdAt: ago(START, 2 * DAY) },
          { id: 'P7-1', amount: 1000n, status: 'paid', createdAt: ago(START, 2 * DAY) },
        ]);
        await ingestTransactions(testDb.database, tmp, [
          { id: 'P7-0-P', orderId: 'P7-0', type: 'payment', amount: '10.00', exec: '0000', at: ago(START, DAY) },
          { id: 'P7-1-P', orderId: 'P7-1', type: 'payment', amount: '9.00', exec: '0000', at: ago(START, DAY) },
        ]);
        const options = { toleranceMinor: 0n, graceHours: 24 };
        await reconcile(testDb.database, { ...options, scope: { kind: 'all' }, asOf: START });
        // Judged again, unchanged: the run writes nothing, so no version holds from it and its row goes.
        const again = await reconcile(testDb.database, {
          ...options,
          scope: { kind: 'all' },
          asOf: new Date(START.getTime() + HOUR),
        });
        expect(again).toMatchObject({ verdictsChanged: 0, lifecycle: { new: 0, persisting: 1 } });
        await allOld();
        // Since then, runs of other orders only.
        await reconcile(testDb.database, {
          ...options,
          scope: { kind: 'orders', orderIds: ['P7-0'] },
          asOf: new Date(START.getTime() + 2 * HOUR),
        });
        const before = await current();
        expect(before.find((row) => row.order_id === 'P7-1')?.lifecycle).toBe('persisting');
        expect((await pruneRuns(db(), { cutoff: cutoff(), dryRun: false, batchSize: 1 })).runs).toBe(2);
        const { rows: runs } = await sql<{
          run_id: string;
        }>`SELECT run_id::text FROM recon.reconciliation_runs`.execute(db());
        expect(runs.map((row) => row.run_id)).not.toContain(again.runId);
        expect(await current()).toEqual(before);
      } finally {
        await testDb.drop();
      }
    },
  );

  it.skipIf(skip)(
    'keeps a run that was cut short, with the changes it kept apart, so that the next run removes them',
    async () => {
      testDb = await createTestDatabase(backend);
      try {
        await history('P4-');
        await allOld();
        const before = await current();
        // What a run over current verdicts cut short in the middle leaves (its run row committed first, one slice
        // written): an unfinished run, one change it kept apart for its finish.
        await testDb.database.transaction((c) =>
          c.exec(`
            INSERT INTO recon.reconciliation_runs (as_of, scope, kind, description, tolerance_minor, grace_hours)
            VALUES (now(), '{"kind": "all"}', 'manual', 'all orders and unknown ORDERIDs', 0, 24);
            INSERT INTO recon.run_verdict_changes (run_id, change, order_id, known, verdict, lifecycle, expected,
              settled, delta, currency, transaction_ids)
            SELECT (SELECT max(run_id) FROM recon.reconciliation_runs), 'changed', order_id, known_order, 'matched',
              'resolved', expected_minor, expected_minor, 0, currency, transaction_ids
            FROM recon.verdicts WHERE order_id = 'P4-1';`),
        );
        const pruned = await pruneRuns(db(), { cutoff: cutoff(), dryRun: false, batchSize: 2 });
        expect(pruned.runs).toBe(6);
        const { rows } = await sql<{ unfinished: number; kept: number }>`SELECT
            (SELECT count(*)::integer FROM recon.reconciliation_runs WHERE finished_at IS NULL) AS unfinished,
            (SELECT count(*)::integer FROM recon.run_verdict_changes c JOIN recon.reconciliation_runs r
               ON r.run_id = c.run_id AND r.finished_at IS NULL) AS kept`.execute(db());
        expect(rows[0]).toEqual({ unfinished: 1, kept: 1 });
        expect(await current()).toEqual(before);
        // The next run removes the one cut short and its change, and finds every verdict as it was, first seen
        // included.
        await reconcile(testDb.database, {
          scope: { kind: 'all' },
          asOf: new Date(START.getTime() + 5 * DAY),
          toleranceMinor: 0n,
          graceHours: 24,
        });
        expect((await current()).map(({ run_id: _, lifecycle: __, ...verdict }) => verdict)).toEqual(
          before.map(({ run_id: _, lifecycle: __, ...verdict }) => verdict),
        );
        expect(await db().selectFrom('recon.run_verdict_changes').select('order_id').execute()).toEqual([]);
      } finally {
        await testDb.drop();
      }
    },
  );

  it.skipIf(skip || backend === 'pglite')(
    'never removes a run in flight when it decides, even when that run finishes while the prune waits its turn',
    async () => {
      testDb = await createTestDatabase(backend);
      try {
        await history('P5-');
        await allOld();
        // A run over all orders on two connections (a sliced run, whose row is committed first, unfinished) that finds
        // nothing changed, held at its end: its last transaction waits to write recon.verdicts.
        // Statistics of the ORDERIDs, which the run cuts its slices at.
        await sql`ANALYZE recon.orders`.execute(db());
        const held = await holdTransaction(testDb.env.DATABASE_URL!, ['LOCK TABLE recon.verdicts IN SHARE MODE']);
        let prune: Promise<unknown> | undefined;
        const run = reconcile(testDb.database, {
          scope: { kind: 'all' },
          asOf: new Date(START.getTime() + 6 * DAY),
          toleranceMinor: 0n,
          graceHours: 24,
          connections: 2,
          minOrdersPerSlice: 1,
          full: true,
        });
        try {
          await waitUntil('the run to wait for recon.verdicts', async () =>
            (await lockWaiters(db())).some((waiter) => waiter.relation === 'recon.verdicts'),
          );
          const { rows: unfinished } = await sql<{ n: number }>`SELECT count(*)::integer AS n
            FROM recon.reconciliation_runs WHERE finished_at IS NULL`.execute(db());
          expect(unfinished).toEqual([{ n: 1 }]);
          prune = pruneRuns(db(), { cutoff: cutoff(), dryRun: false, batchSize: 2 });
          await waitUntil('the prune to wait for its turn', async () =>
            (await lockWaiters(db())).some((waiter) => waiter.query.includes('pg_advisory_xact_lock')),
          );
        } finally {
          await held.release();
        }
        const summary = await run;
        expect(await prune).toMatchObject({ runs: 6 });
        expect(summary.verdictsChanged).toBe(0);
        // The run is whole: its row, unpruned, and its bridge, which its report reads.
        const { rows } = await sql<{ history_pruned_at: Date | null; totals: number }>`SELECT r.history_pruned_at,
            (SELECT count(*)::integer FROM reporting.run_totals t WHERE t.run_id = r.run_id) AS totals
          FROM reporting.runs r WHERE r.run_id = ${summary.runId}::bigint`.execute(db());
        expect(rows).toEqual([{ history_pruned_at: null, totals: summary.totals.length }]);
        const report = await loadRunReport(db(), summary.runId);
        expect(reportWarnings(report)).toEqual([]);
        expect(report.bridge.length).toBe(summary.totals.length);
      } finally {
        await testDb.drop();
      }
    },
  );
});
