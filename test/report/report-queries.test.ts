import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunSummary } from '../../src/reconcile/reconcile.ts';
import { loadRunReport, oldestOpenExceptions, openExceptionPages } from '../../src/report/report-queries.ts';
import { reportWarnings, verdictsPerDay, verdictTotals } from '../../src/report/run-report.ts';
import { expectReconError } from '../support/expect-recon-error.ts';
import { BACKENDS, createTestDatabase, hasPostgres, type TestDatabase } from '../support/test-database.ts';
import { AS_OF, FORMULA_ID, SCRIPT_ID, twoRuns, UNKNOWN_ID } from './report-scenario.ts';

describe.each(BACKENDS)('report queries on %s', (backend) => {
  const skip = backend === 'postgres' && !hasPostgres;
  let testDb: TestDatabase;
  let tmp: string;
  let runs: { first: RunSummary; second: RunSummary };
  beforeAll(async () => {
    if (skip) return;
    testDb = await createTestDatabase(backend);
    tmp = await mkdtemp(path.join(os.tmpdir(), 'recon-report-'));
    runs = await twoRuns(testDb.database, tmp);
  });
  afterAll(async () => {
    await testDb?.drop();
    if (tmp) await rm(tmp, { recursive: true, force: true });
  });

  it.skipIf(skip)(
    'loads the latest finished run: its facts, the bridge per currency and its verdicts per day and status',
    async () => {
      const report = await loadRunReport(testDb.database.db);
      expect(report.run).toMatchObject({
        runId: runs.second.runId,
        asOf: AS_OF,
        scope: { kind: 'all' },
        toleranceMinor: '0',
        graceHours: 24,
        ordersInScope: 16,
        notFound: [],
        suspect: false,
        suspectReason: null,
        prunedAt: null,
      });
      expect(report.run.counts).toMatchObject({
        matched: 10,
        pending: 1,
        amount_mismatch: 1,
        duplicate_payment: 1,
        missing_at_provider: 2,
        unknown_order: 1,
      });
      expect(report.run.finishedAt).toBeInstanceOf(Date);
      expect(report.bridge).toEqual(runs.second.totals);
      expect(report.bridge.map((row) => row.currency)).toEqual(['EUR', 'JPY', 'KWD']);
      expect(reportWarnings(report)).toEqual([]);

      const totals = verdictTotals(report.verdictGroups);
      expect(totals).toMatchObject({
        verdicts: 16,
        matched: 10,
        pending: 1,
        exceptions: 5,
        unknownOrders: 1,
        undated: 0,
      });
      expect(totals.byLifecycle).toEqual(runs.second.lifecycle);
      expect(totals.byLifecycle).toEqual({ new: 2, persisting: 3, resolved: 1 });

      const days = new Map(verdictsPerDay(report.verdictGroups).map((day) => [day.day, day]));
      expect([...days.keys()]).toEqual([
        '2026-11-10',
        '2026-11-11',
        '2026-11-12',
        '2026-11-13',
        '2026-11-14',
        '2026-11-15',
        '2026-11-16',
        '2026-11-17',
        '2026-11-18',
        '2026-11-19',
        '2026-11-20',
      ]);
      // The unknown order has no creation date: it sits on the day of its only transaction (6 days before, plus an hour).
      expect(Object.fromEntries(days.get('2026-11-14')!.byStatus)).toEqual({ matched: 1, unknown_order: 1 });
      expect(Object.fromEntries(days.get('2026-11-15')!.byStatus)).toEqual({ matched: 2 });
      expect(Object.fromEntries(days.get('2026-11-19')!.byStatus)).toEqual({ missing_at_provider: 2 });
    },
  );

  it.skipIf(skip)('loads the run named, and refuses one that does not exist', async () => {
    const report = await loadRunReport(testDb.database.db, runs.first.runId);
    expect(report.run).toMatchObject({ runId: runs.first.runId, asOf: runs.first.asOf });
    expect(verdictTotals(report.verdictGroups).byStatus.get('missing_at_provider')).toBe(1);
    await expectReconError(
      () => loadRunReport(testDb.database.db, '999999'),
      'RUN_NOT_FOUND',
      'no reconciliation run 999999',
    );
  });

  it.skipIf(skip)('skips an unfinished run unless it is named, and then says it never finished', async () => {
    const { run_id } = await testDb.database.db
      .insertInto('recon.reconciliation_runs')
      .values({
        as_of: AS_OF,
        scope: JSON.stringify({ kind: 'all' }),
        description: 'all orders and unknown ORDERIDs',
        tolerance_minor: '0',
        grace_hours: 24,
      })
      .returning('run_id')
      .executeTakeFirstOrThrow();
    expect((await loadRunReport(testDb.database.db)).run.runId).toBe(runs.second.runId);
    const unfinished = await loadRunReport(testDb.database.db, String(run_id));
    expect(unfinished.run.finishedAt).toBeNull();
    expect(reportWarnings(unfinished)).toEqual([`run ${run_id} never finished: its verdicts may be incomplete`]);
  });

  it.skipIf(skip)(
    'pages through every open exception by order id, amounts as strings, explanations as stored',
    async () => {
      const pages = [];
      for await (const page of openExceptionPages(testDb.database.db, runs.second.runId, { pageSize: 2 }))
        pages.push(page);
      expect(pages.map((page) => page.length)).toEqual([2, 2, 1]);
      const all = pages.flat();
      expect(all.map((exception) => exception.orderId)).toEqual(
        [SCRIPT_ID, FORMULA_ID, 'A-1', 'K-2', UNKNOWN_ID].sort(),
      );
      const a1 = all.find((exception) => exception.orderId === 'A-1')!;
      expect(a1).toMatchObject({
        knownOrder: true,
        status: 'amount_mismatch',
        lifecycle: 'persisting',
        firstSeenRunId: runs.first.runId,
        firstSeenAt: runs.first.asOf,
        currency: 'EUR',
        expectedMinor: '10000',
        settledMinor: '9000',
        deltaMinor: '-1000',
      });
      expect(a1.explanation).toMatchObject({
        rule: 'amount_mismatch',
        transactions: [expect.objectContaining({ transaction_id: 'TA-1', amount_minor: '9000' })],
      });
      expect(all.find((exception) => exception.orderId === UNKNOWN_ID)).toMatchObject({
        knownOrder: false,
        status: 'unknown_order',
        settledMinor: '500',
      });
    },
  );

  it.skipIf(skip)('gives the same pages in the same order however many it reads at once, and stops early', async () => {
    const pagesOf = async (readsAhead: number) => {
      const pages = [];
      for await (const page of openExceptionPages(testDb.database.db, runs.second.runId, { pageSize: 2, readsAhead }))
        pages.push(page.map((exception) => exception.orderId));
      return pages;
    };
    const oneAtATime = await pagesOf(1);
    expect(oneAtATime.flat()).toEqual([SCRIPT_ID, FORMULA_ID, 'A-1', 'K-2', UNKNOWN_ID].sort());
    expect(await pagesOf(2)).toEqual(oneAtATime);
    expect(await pagesOf(5)).toEqual(oneAtATime);
    // A caller that stops after the first page leaves reads behind; the database still answers after them.
    for await (const page of openExceptionPages(testDb.database.db, runs.second.runId, {
      pageSize: 1,
      readsAhead: 3,
    })) {
      expect(page.map((exception) => exception.orderId)).toEqual([oneAtATime[0]![0]]);
      break;
    }
    expect((await oldestOpenExceptions(testDb.database.db, runs.second.runId, 1)).length).toBe(1);
  });

  it.skipIf(skip)('lists the oldest open exceptions first, as many as asked', async () => {
    const oldest = await oldestOpenExceptions(testDb.database.db, runs.second.runId, 4);
    expect(oldest.map((exception) => [exception.orderId, exception.lifecycle])).toEqual([
      ['A-1', 'persisting'],
      ['K-2', 'persisting'],
      [UNKNOWN_ID, 'persisting'],
      [SCRIPT_ID < FORMULA_ID ? SCRIPT_ID : FORMULA_ID, 'new'],
    ]);
  });
  it.skipIf(skip)(
    "writes each exception's explanation as reporting.exceptions gives it, a transaction changed since included",
    async () => {
      const { db } = testDb.database;
      // As a later export revising it would: changed after every run.
      await sql`UPDATE recon.transactions SET updated_at = now() + interval '1 minute' WHERE transaction_id = 'TA-1'`.execute(
        db,
      );
      // The json text the report reads parses to the jsonb the views build, key order included, changed or not.
      const { rows: shapes } = await sql<{ json: string; jsonb: string }>`SELECT
          recon.explained_transaction_json(t, f.name, c)::text AS json,
          (recon.explained_transaction(t, f.name)
            || CASE WHEN c THEN '{"changed_after_run": true}'::jsonb ELSE '{}'::jsonb END)::text AS jsonb
        FROM recon.transactions t LEFT JOIN recon.files f ON f.file_id = t.file_id CROSS JOIN (VALUES (true), (false)) AS v(c)`.execute(
        db,
      );
      expect(shapes.length).toBeGreaterThan(10);
      for (const shape of shapes)
        expect(JSON.stringify(JSON.parse(shape.json))).toBe(JSON.stringify(JSON.parse(shape.jsonb)));

      const { rows: view } = await sql<{ order_id: string; explanation: string }>`SELECT order_id,
          explanation::text AS explanation FROM reporting.exceptions`.execute(db);
      const report = [];
      for await (const page of openExceptionPages(db, runs.second.runId)) report.push(...page);
      expect(report.map((exception) => exception.orderId).sort()).toEqual(view.map((row) => row.order_id).sort());
      for (const row of view) {
        const exception = report.find((candidate) => candidate.orderId === row.order_id)!;
        expect(JSON.stringify(exception.explanation)).toBe(JSON.stringify(JSON.parse(row.explanation)));
      }
      expect(JSON.stringify(report.find((exception) => exception.orderId === 'A-1')!.explanation)).toContain(
        '"transaction_id":"TA-1","changed_after_run":true',
      );
    },
  );
});

describe.each(BACKENDS)('report queries on an empty %s database', (backend) => {
  const skip = backend === 'postgres' && !hasPostgres;
  let testDb: TestDatabase;
  beforeAll(async () => {
    if (!skip) testDb = await createTestDatabase(backend);
  });
  afterAll(async () => testDb?.drop());

  it.skipIf(skip)('says to run recon reconcile when there is no run yet', async () => {
    await expectReconError(
      () => loadRunReport(testDb.database.db),
      'RUN_NOT_FOUND',
      'no nightly run and no run over all orders has finished yet',
      'recon reconcile --all',
    );
  });
});
