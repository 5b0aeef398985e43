import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { reconcile, type RunSummary } from '../../src/reconcile/reconcile.ts';
import type { ReconcileScope } from '../../src/reconcile/reconcile-scope.ts';
import { runVerdicts } from '../../src/report/run-verdicts.ts';
import { BACKENDS, createTestDatabase, hasPostgres, type TestDatabase } from '../support/test-database.ts';
import { ago, DAY, HOUR, ingestTransactions, insertOrders, type TestOrder } from './reconcile-scenario.ts';

const START = new Date('2026-11-01T12:00:00Z');
const id = (i: number) => `J-O${String(i).padStart(2, '0')}`;

/** Orders matched, short by a euro (an exception until the books change), authorized, young and unpaid. */
function scenarioOrders(): TestOrder[] {
  return Array.from({ length: 12 }, (_, i) => {
    const kind = i % 4;
    if (kind === 0) return { id: id(i), amount: 1000n, status: 'paid', createdAt: ago(START, 2 * DAY) };
    if (kind === 1) return { id: id(i), amount: 2000n, status: 'paid', createdAt: ago(START, 2 * DAY) };
    if (kind === 2) return { id: id(i), amount: 3000n, status: 'authorized', createdAt: ago(START, 3 * DAY) };
    return { id: id(i), amount: 4000n, status: 'paid', createdAt: ago(START, 2 * HOUR) };
  });
}

/**
 * A run over all orders writes no mark on the verdicts it judges again (src/reconcile/judged-again.ts): the views
 * read it from the run. Whatever runs came, every view gives each order the lifecycle the latest run that judged it
 * gave, as that run's own verdicts say it (recon.verdict_versions read as of the run, which no mark enters).
 */
describe.each(BACKENDS)('verdicts judged again on %s', (backend) => {
  const skip = backend === 'postgres' && !hasPostgres;
  let testDb: TestDatabase;
  let tmp: string;
  beforeAll(async () => {
    if (skip) return;
    tmp = await mkdtemp(path.join(os.tmpdir(), 'recon-judged-again-'));
  });
  afterAll(async () => {
    if (tmp) await rm(tmp, { recursive: true, force: true });
  });

  const db = () => testDb.database.db;
  const run = (scope: ReconcileScope, asOf: Date) =>
    reconcile(testDb.database, { scope, asOf, toleranceMinor: 0n, graceHours: 24 });

  async function load(): Promise<void> {
    await insertOrders(testDb.database, scenarioOrders());
    await ingestTransactions(
      testDb.database,
      tmp,
      scenarioOrders()
        .filter((_, i) => i % 4 !== 3)
        .map((order, i) => ({
          id: `${order.id}-X`,
          orderId: order.id,
          type: order.status === 'authorized' ? ('authorization' as const) : ('payment' as const),
          amount: order.amount === 2000n ? '19.00' : (Number(order.amount) / 100).toFixed(2),
          exec: '0000',
          at: ago(START, i % 3 === 2 ? 3 * DAY : DAY),
        })),
    );
    await ingestTransactions(testDb.database, tmp, [
      { id: 'J-U-P', orderId: 'J-UNKNOWN', type: 'payment', amount: '5.00', exec: '0000', at: ago(START, DAY) },
    ]);
  }

  /** The lifecycle of each current verdict in the views; reporting.exceptions must say the same as the other. */
  async function viewed(): Promise<Record<string, string | null>> {
    const rows = await db()
      .selectFrom('reporting.reconciliation')
      .select(['order_id', 'lifecycle'])
      .orderBy('order_id')
      .execute();
    const exceptions = await db().selectFrom('reporting.exceptions').select(['order_id', 'lifecycle']).execute();
    for (const exception of exceptions) {
      expect(rows.find((row) => row.order_id === exception.order_id)?.lifecycle, exception.order_id).toBe(
        exception.lifecycle,
      );
    }
    return Object.fromEntries(rows.map((row) => [row.order_id, row.lifecycle]));
  }

  /** Each current verdict's lifecycle as the latest finished run that judged its order gave it. */
  async function asTheLatestRunJudged(runs: readonly RunSummary[]): Promise<Record<string, string | null | undefined>> {
    const current = await db().selectFrom('recon.verdicts').select('order_id').orderBy('order_id').execute();
    const expected: Record<string, string | null> = {};
    for (const summary of [...runs].reverse()) {
      const verdicts = await db()
        .selectFrom(await runVerdicts(db(), summary.runId))
        .select(['order_id', 'lifecycle'])
        .execute();
      for (const verdict of verdicts) {
        if (!(verdict.order_id in expected)) expected[verdict.order_id] = verdict.lifecycle;
      }
    }
    return Object.fromEntries(current.map((row) => [row.order_id, expected[row.order_id]]));
  }

  it.skipIf(skip)(
    'after runs over all orders, named orders and a creation date, each view says what the latest run that judged the order said',
    async () => {
      testDb = await createTestDatabase(backend);
      try {
        await load();
        const runs: RunSummary[] = [];
        const step = async (scope: ReconcileScope, asOf: Date, label: string) => {
          const summary = await run(scope, asOf);
          runs.push(summary);
          expect(await viewed(), label).toEqual(await asTheLatestRunJudged(runs));
          return summary;
        };
        const first = await step({ kind: 'all' }, START, 'first run over all orders');
        expect(first.lifecycle.new).toBeGreaterThan(2);
        await step({ kind: 'orders', orderIds: [id(1), id(5)] }, new Date(START.getTime() + HOUR), 'named orders');
        const again = await step({ kind: 'all' }, new Date(START.getTime() + 2 * HOUR), 'all orders again');
        expect(again.lifecycle.new).toBe(0);
        expect(Object.values(await viewed())).not.toContain('new');

        // The books corrected for one exception: it resolves in a run of that order alone, then moves on in a run
        // over the orders created since a date.
        await insertOrders(testDb.database, [
          { id: id(1), amount: 1900n, status: 'paid', createdAt: ago(START, 2 * DAY) },
        ]);
        await step({ kind: 'orders', orderIds: [id(1)] }, new Date(START.getTime() + 3 * HOUR), 'resolved by name');
        expect((await viewed())[id(1)]).toBe('resolved');
        await step(
          { kind: 'created_since', since: ago(START, 2 * DAY + HOUR) },
          new Date(START.getTime() + 4 * HOUR),
          'created since',
        );

        // A new exception of a new order, seen first by a run of it alone, then judged by a run over all orders
        // two days on, in which time alone moved other verdicts (versions into recon.verdict_history).
        await insertOrders(testDb.database, [
          { id: id(12), amount: 2000n, status: 'paid', createdAt: ago(START, 2 * DAY) },
        ]);
        await ingestTransactions(testDb.database, tmp, [
          { id: `${id(12)}-P`, orderId: id(12), type: 'payment', amount: '19.00', exec: '0000', at: ago(START, DAY) },
        ]);
        await step({ kind: 'orders', orderIds: [id(12)] }, new Date(START.getTime() + 5 * HOUR), 'a new order');
        expect((await viewed())[id(12)]).toBe('new');
        const later = await step({ kind: 'all' }, new Date(START.getTime() + 2 * DAY), 'all orders two days on');
        expect(later.verdictsChanged).toBeGreaterThan(0);
        await insertOrders(testDb.database, [
          { id: id(5), amount: 1900n, status: 'paid', createdAt: ago(START, 2 * DAY) },
        ]);
        await step({ kind: 'all' }, new Date(START.getTime() + 2 * DAY + HOUR), 'resolved over all orders');
        expect((await viewed())[id(5)]).toBe('resolved');
        await step(
          { kind: 'orders', orderIds: [id(5), id(9)] },
          new Date(START.getTime() + 2 * DAY + 2 * HOUR),
          'named',
        );
        expect((await viewed())[id(5)]).toBeNull();
        await step({ kind: 'all' }, new Date(START.getTime() + 2 * DAY + 3 * HOUR), 'all orders last');
      } finally {
        await testDb.drop();
      }
    },
  );

  it.skipIf(skip)(
    'a run that finds every verdict the same rewrites none of those a run over all orders judged',
    async () => {
      testDb = await createTestDatabase(backend);
      try {
        await load();
        const first = await run({ kind: 'all' }, START);
        expect(first.lifecycle.new).toBeGreaterThan(0);
        const where = async () =>
          (
            await sql<{ order_id: string; ctid: string }>`SELECT order_id, ctid::text AS ctid FROM recon.verdicts
            ORDER BY order_id`.execute(db())
          ).rows;
        const before = await where();
        const again = await run({ kind: 'all' }, START);
        expect(again).toMatchObject({ verdictsChanged: 0, lifecycle: { new: 0, persisting: first.lifecycle.new } });
        // Every exception moved on to persisting, and not one row was written for it.
        expect(Object.values(await viewed()).filter((lifecycle) => lifecycle === 'persisting')).toHaveLength(
          first.lifecycle.new,
        );
        expect(await where()).toEqual(before);
        // Nor does a run over named orders mark what the run over all orders judged again already.
        const named = await run({ kind: 'orders', orderIds: [id(1), id(5), id(9)] }, START);
        expect(named).toMatchObject({ verdictsChanged: 0, lifecycle: { new: 0, persisting: 3 } });
        expect(await where()).toEqual(before);
      } finally {
        await testDb.drop();
      }
    },
  );
});
