import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { reconcile, type ReconcileOptions, type RunSummary } from '../../src/reconcile/reconcile.ts';
import type { ReconcileScope } from '../../src/reconcile/reconcile-scope.ts';
import { loadRunReport, openExceptionPages } from '../../src/report/report-queries.ts';
import { BACKENDS, createTestDatabase, hasPostgres, type TestDatabase } from '../support/test-database.ts';
import {
  ago,
  DAY,
  HOUR,
  ingestTransactions,
  insertOrders,
  type TestOrder,
  type TestTransaction,
} from './reconcile-scenario.ts';

const START = new Date('2026-11-01T12:00:00Z');

/** Orders of every kind that time or a change moves: paid, refunded, authorized, young, and an unknown ORDERID. */
function scenario(prefix: string): { orders: TestOrder[]; transactions: TestTransaction[] } {
  const orders: TestOrder[] = [];
  const transactions: TestTransaction[] = [];
  for (let i = 0; i < 12; i++) {
    const id = `${prefix}O${String(i).padStart(2, '0')}`;
    const kind = i % 4;
    if (kind === 0) {
      orders.push({ id, amount: 1000n, status: 'paid', createdAt: ago(START, 2 * DAY) });
      transactions.push({
        id: `${id}-P`,
        orderId: id,
        type: 'payment',
        amount: '10.00',
        exec: '0000',
        at: ago(START, DAY),
      });
    } else if (kind === 1) {
      // Short by a euro: an amount_mismatch that persists until the merchant's books change.
      orders.push({ id, amount: 2000n, status: 'paid', createdAt: ago(START, 2 * DAY) });
      transactions.push({
        id: `${id}-P`,
        orderId: id,
        type: 'payment',
        amount: '19.00',
        exec: '0000',
        at: ago(START, DAY),
      });
    } else if (kind === 2) {
      // Authorized three days before START: at risk after two more days, expired after four.
      orders.push({ id, amount: 3000n, status: 'authorized', createdAt: ago(START, 3 * DAY) });
      transactions.push({
        id: `${id}-A`,
        orderId: id,
        type: 'authorization',
        amount: '30.00',
        exec: '0000',
        at: ago(START, 3 * DAY),
      });
    } else {
      // Young and unpaid: pending through the 24-hour grace period, then missing_at_provider.
      orders.push({ id, amount: 4000n, status: 'paid', createdAt: ago(START, 2 * HOUR) });
    }
  }
  transactions.push({
    id: `${prefix}U-P`,
    orderId: `${prefix}UNKNOWN`,
    type: 'payment',
    amount: '5.00',
    exec: '0000',
    at: ago(START, DAY),
  });
  return { orders, transactions };
}

describe.each(BACKENDS)('verdict history on %s', (backend) => {
  const skip = backend === 'postgres' && !hasPostgres;
  let testDb: TestDatabase;
  let tmp: string;
  beforeAll(async () => {
    if (skip) return;
    testDb = await createTestDatabase(backend);
    tmp = await mkdtemp(path.join(os.tmpdir(), 'recon-history-'));
  });
  afterAll(async () => {
    await testDb?.drop();
    if (tmp) await rm(tmp, { recursive: true, force: true });
  });

  const db = () => testDb.database.db;
  const run = (scope: ReconcileScope, asOf: Date, overrides: Partial<ReconcileOptions> = {}) =>
    reconcile(testDb.database, { scope, asOf, toleranceMinor: 0n, graceHours: 24, ...overrides });

  /** Everything a report of the run shows, the transactions inside explanations aside (read as they are now). */
  async function reportOf(runId: string) {
    const report = await loadRunReport(db(), runId);
    const exceptions = [];
    for await (const page of openExceptionPages(db(), runId, { pageSize: 3 })) exceptions.push(...page);
    return {
      run: report.run,
      bridge: report.bridge,
      verdictGroups: report.verdictGroups,
      exceptions: exceptions.map(({ explanation, ...rest }) => {
        const { transactions, ...stored } = explanation as { transactions: { transaction_id: string }[] };
        return { ...rest, explanation: stored, transactionIds: transactions.map((t) => t.transaction_id).sort() };
      }),
    };
  }

  async function storedVersions(): Promise<number> {
    const { rows } = await sql<{ n: number }>`SELECT (SELECT count(*) FROM recon.verdicts)
      + (SELECT count(*) FROM recon.verdict_history) AS n`.execute(db());
    return Number(rows[0]!.n);
  }

  async function currentVerdicts() {
    return db()
      .selectFrom('reporting.reconciliation')
      .select(['order_id', 'status', 'lifecycle', 'expected_minor', 'settled_minor', 'delta_minor', 'first_seen'])
      .select(sql<string>`explanation->>'reason'`.as('reason'))
      .orderBy('order_id')
      .execute();
  }

  it.skipIf(skip)(
    'a run reports the same after ten more runs with changes, and each change is in reporting.verdict_history',
    async () => {
      const { orders, transactions } = scenario('H1-');
      await insertOrders(testDb.database, orders);
      await ingestTransactions(testDb.database, tmp, transactions);
      const first = await run({ kind: 'all' }, START);
      const before = await reportOf(first.runId);
      expect(before.exceptions.length).toBeGreaterThan(0);

      const later: RunSummary[] = [];
      for (let day = 1; day <= 10; day++) {
        const asOf = new Date(START.getTime() + day * DAY);
        const id = (i: number) => `H1-O${String(i).padStart(2, '0')}`;
        // A change a day: a refund, a late payment, a capture, the books corrected, a refused duplicate.
        if (day === 2)
          await ingestTransactions(testDb.database, tmp, [
            { id: `${id(0)}-R`, orderId: id(0), type: 'refund', amount: '1.00', exec: '0000', at: asOf },
          ]);
        if (day === 3)
          await ingestTransactions(testDb.database, tmp, [
            { id: `${id(3)}-P`, orderId: id(3), type: 'payment', amount: '40.00', exec: '0000', at: asOf },
          ]);
        if (day === 5)
          await ingestTransactions(testDb.database, tmp, [
            { id: `${id(2)}-C`, orderId: id(2), type: 'capture', amount: '30.00', exec: '0000', at: asOf },
          ]);
        if (day === 6)
          await insertOrders(testDb.database, [
            { id: id(1), amount: 1900n, status: 'paid', createdAt: ago(START, 2 * DAY) },
          ]);
        if (day === 8)
          await ingestTransactions(testDb.database, tmp, [
            { id: 'H1-U-P', orderId: 'H1-UNKNOWN', type: 'payment', amount: '5.00', exec: '0005', at: ago(START, DAY) },
          ]);
        const scope: ReconcileScope =
          day === 4
            ? { kind: 'orders', orderIds: [id(5), id(9)] }
            : day === 7
              ? { kind: 'created_since', since: ago(START, 2 * DAY) }
              : { kind: 'all' };
        later.push(await run(scope, asOf));
      }

      expect(await reportOf(first.runId)).toEqual(before);
      // The other runs too: each one's verdicts add up to its own counts, as when it finished.
      for (const summary of later) {
        const report = await loadRunReport(db(), summary.runId);
        const counted = report.verdictGroups.reduce((sum, group) => sum + group.verdicts, 0);
        expect(counted, `run ${summary.runId} (${summary.description})`).toBe(summary.ordersInScope);
      }

      const history = await db()
        .selectFrom('reporting.verdict_history')
        .select(['order_id', 'change', 'status_before', 'status_after'])
        .select(sql<string>`run_id::text`.as('run_id'))
        .where('order_id', 'in', ['H1-O02', 'H1-UNKNOWN'])
        .orderBy('order_id')
        .orderBy('run_id')
        .execute();
      const statusChanges = history.filter((row) => row.status_before !== row.status_after);
      expect(statusChanges.map((row) => [row.order_id, row.status_before, row.status_after])).toEqual([
        ['H1-O02', null, 'matched'],
        ['H1-O02', 'matched', 'capture_at_risk'],
        // Captured while the merchant's books still say authorized.
        ['H1-O02', 'capture_at_risk', 'status_mismatch'],
        ['H1-UNKNOWN', null, 'unknown_order'],
        ['H1-UNKNOWN', 'unknown_order', null],
      ]);
      expect(history.find((row) => row.order_id === 'H1-UNKNOWN' && row.status_after === null)).toMatchObject({
        change: 'removed',
        run_id: later[7]!.runId,
      });
    },
  );

  it.skipIf(skip)(
    'a run over all orders after another computes only what changed or came due, and writes only what differs',
    async () => {
      const { orders, transactions } = scenario('H2-');
      await insertOrders(testDb.database, orders);
      await ingestTransactions(testDb.database, tmp, transactions);
      const later = new Date(START.getTime() + 20 * DAY);
      await run({ kind: 'all' }, later);
      // The first run's new exceptions persist in the second: one version more each, then nothing.
      const settled = await run({ kind: 'all' }, new Date(later.getTime() + HOUR));
      const versions = await storedVersions();
      const unchanged = await run({ kind: 'all' }, new Date(later.getTime() + 2 * HOUR));
      expect(unchanged).toMatchObject({ verdictsComputed: 0, verdictsChanged: 0, counts: settled.counts });
      expect(unchanged.totals).toEqual(settled.totals);
      expect(await storedVersions()).toBe(versions);

      // One order changes: that order alone is computed again.
      // The merchant's books corrected: the order was for what was paid.
      await insertOrders(testDb.database, [
        { id: 'H2-O01', amount: 1900n, status: 'paid', createdAt: ago(START, 2 * DAY) },
      ]);
      const changed = await run({ kind: 'all' }, new Date(later.getTime() + 3 * HOUR));
      expect(changed).toMatchObject({ verdictsComputed: 1, verdictsChanged: 1 });
      expect(changed.counts.amount_mismatch).toBe(settled.counts.amount_mismatch - 1);
      expect(changed.lifecycle.resolved).toBe(1);
      expect(await storedVersions()).toBe(versions + 1);

      // Whatever was skipped, the current verdicts are what a run computing everything gives.
      const incremental = await currentVerdicts();
      const full = await run({ kind: 'all' }, new Date(later.getTime() + 4 * HOUR), { full: true });
      expect(full.verdictsComputed).toBe(full.ordersInScope);
      expect(full.verdictsChanged).toBe(0);
      const afterFull = await currentVerdicts();
      // Judged again, a lifecycle moves on: new becomes persisting, resolved becomes nothing.
      const movedOn = { new: 'persisting', persisting: 'persisting', resolved: null } as const;
      expect(afterFull).toEqual(
        incremental.map((verdict) => ({
          ...verdict,
          lifecycle: verdict.lifecycle === null ? null : movedOn[verdict.lifecycle],
        })),
      );
    },
  );

  it.skipIf(skip)(
    'time alone moves a verdict: a run after the grace period or the capture window looks again',
    async () => {
      const { orders, transactions } = scenario('H3-');
      await insertOrders(
        testDb.database,
        orders.filter((order) => order.id <= 'H3-O03'),
      );
      await ingestTransactions(
        testDb.database,
        tmp,
        transactions.filter((t) => t.orderId <= 'H3-O03'),
      );
      const statusOf = async (orderId: string) =>
        (
          await db()
            .selectFrom('reporting.reconciliation')
            .select('status')
            .where('order_id', '=', orderId)
            .executeTakeFirst()
        )?.status;
      // Other tests' orders share the database: a run over these orders first, then runs over all of them.
      await run({ kind: 'orders', orderIds: ['H3-O02', 'H3-O03'] }, START);
      expect(await statusOf('H3-O02')).toBe('matched');
      expect(await statusOf('H3-O03')).toBe('pending');
      await run({ kind: 'all' }, new Date(START.getTime() + 25 * DAY), { full: true });
      await run({ kind: 'all' }, new Date(START.getTime() + 25 * DAY + HOUR));
      const quiet = await run({ kind: 'all' }, new Date(START.getTime() + 25 * DAY + 2 * HOUR));
      expect(quiet.verdictsComputed).toBe(0);

      // A fresh order: pending now, missing_at_provider once 24 hours have passed, with nothing else changing.
      const now = new Date(START.getTime() + 26 * DAY);
      await insertOrders(testDb.database, [
        { id: 'H3-YOUNG', amount: 500n, status: 'paid', createdAt: ago(now, HOUR) },
        { id: 'H3-AUTH', amount: 700n, status: 'authorized', createdAt: ago(now, 4 * DAY) },
      ]);
      await ingestTransactions(testDb.database, tmp, [
        {
          id: 'H3-AUTH-A',
          orderId: 'H3-AUTH',
          type: 'authorization',
          amount: '7.00',
          exec: '0000',
          at: ago(now, 4 * DAY),
        },
      ]);
      await run({ kind: 'all' }, now);
      expect(await statusOf('H3-YOUNG')).toBe('pending');
      expect(await statusOf('H3-AUTH')).toBe('matched');
      const nextDay = await run({ kind: 'all' }, new Date(now.getTime() + DAY + HOUR));
      expect(nextDay.verdictsComputed).toBeGreaterThanOrEqual(2);
      expect(await statusOf('H3-YOUNG')).toBe('missing_at_provider');
      expect(await statusOf('H3-AUTH')).toBe('capture_at_risk');
      await run({ kind: 'all' }, new Date(now.getTime() + 3 * DAY + HOUR));
      expect(await statusOf('H3-AUTH')).toBe('capture_expired');
    },
  );

  it.skipIf(skip)(
    'the views give each order the lifecycle of the latest run that judged it, as that run counted it',
    async () => {
      const { orders, transactions } = scenario('H4-');
      await insertOrders(testDb.database, orders);
      await ingestTransactions(testDb.database, tmp, transactions);
      /** Lifecycles of the scenario's verdicts, as reporting.reconciliation and reporting.exceptions say them. */
      const lifecycles = async () => {
        const rows = await db()
          .selectFrom('reporting.reconciliation')
          .select(['order_id', 'lifecycle'])
          .where('order_id', 'like', 'H4-%')
          .execute();
        const exceptions = await db()
          .selectFrom('reporting.exceptions')
          .select(['order_id', 'lifecycle'])
          .where('order_id', 'like', 'H4-%')
          .execute();
        for (const exception of exceptions) {
          expect(rows.find((row) => row.order_id === exception.order_id)?.lifecycle).toBe(exception.lifecycle);
        }
        return Object.fromEntries(rows.map((row) => [row.order_id, row.lifecycle]));
      };
      const tally = (byOrder: Record<string, string | null>) => ({
        new: Object.values(byOrder).filter((lifecycle) => lifecycle === 'new').length,
        persisting: Object.values(byOrder).filter((lifecycle) => lifecycle === 'persisting').length,
        resolved: Object.values(byOrder).filter((lifecycle) => lifecycle === 'resolved').length,
      });
      const scope = { kind: 'orders' as const, orderIds: [...orders.map((order) => order.id), 'H4-UNKNOWN'] };

      const first = await run(scope, START);
      expect(first.lifecycle.new).toBeGreaterThan(0);
      expect(tally(await lifecycles())).toEqual(first.lifecycle);

      // Judged again, unchanged: what the run called persisting, the views do too, at the same as_of or later.
      const second = await run(scope, START);
      expect(second.lifecycle).toMatchObject({ new: 0, persisting: first.lifecycle.new });
      expect(tally(await lifecycles())).toEqual(second.lifecycle);

      // The books corrected for one exception (it resolves) while a run judges only that order: the others keep the
      // lifecycle of the run before, which judged them last.
      await insertOrders(testDb.database, [
        { id: 'H4-O01', amount: 1900n, status: 'paid', createdAt: ago(START, 2 * DAY) },
      ]);
      const named = await run({ kind: 'orders', orderIds: ['H4-O01'] }, new Date(START.getTime() + HOUR));
      expect(named.lifecycle).toEqual({ new: 0, persisting: 0, resolved: 1 });
      const afterNamed = await lifecycles();
      expect(afterNamed['H4-O01']).toBe('resolved');
      expect(tally(afterNamed)).toEqual({
        ...second.lifecycle,
        persisting: second.lifecycle.persisting - 1,
        resolved: 1,
      });

      // Weeks later, with time moving verdicts on: every view still agrees with the run that judged last.
      const later = await run(scope, new Date(START.getTime() + 30 * DAY));
      expect(later.lifecycle.new).toBeGreaterThan(0);
      expect(tally(await lifecycles())).toEqual(later.lifecycle);
      expect((await lifecycles())['H4-O01']).toBeNull();
    },
  );

  it.skipIf(skip)(
    'a verdict looked at again, unchanged, keeps the lifecycle its own run gave it: that run reports the same',
    async () => {
      const { orders, transactions } = scenario('H5-');
      await insertOrders(testDb.database, orders);
      await ingestTransactions(testDb.database, tmp, transactions);
      const scope = { kind: 'orders' as const, orderIds: [...orders.map((order) => order.id), 'H5-UNKNOWN'] };
      const first = await run(scope, START);
      await insertOrders(testDb.database, [
        { id: 'H5-O01', amount: 1900n, status: 'paid', createdAt: ago(START, 2 * DAY) },
      ]);
      const resolving = await run({ kind: 'orders', orderIds: ['H5-O01'] }, new Date(START.getTime() + HOUR));
      expect(resolving.lifecycle.resolved).toBe(1);
      const lifecycles = async (runId: string) => {
        const report = await loadRunReport(db(), runId);
        const counts = { new: 0, persisting: 0, resolved: 0 };
        for (const group of report.verdictGroups) if (group.lifecycle) counts[group.lifecycle] += group.verdicts;
        return counts;
      };
      const before = [await lifecycles(first.runId), await lifecycles(resolving.runId)];
      // Every current verdict to be looked at again, as a run cut short leaves the versions it puts back.
      await sql`UPDATE recon.verdicts SET recheck_at = '-infinity' WHERE order_id LIKE 'H5-%'`.execute(db());
      const again = await run(scope, new Date(START.getTime() + 2 * HOUR));
      expect(again.verdictsChanged).toBe(0);
      expect([await lifecycles(first.runId), await lifecycles(resolving.runId)]).toEqual(before);
      const views = await db()
        .selectFrom('reporting.reconciliation')
        .select(['order_id', 'lifecycle'])
        .where('order_id', 'like', 'H5-%')
        .execute();
      expect(views.find((row) => row.order_id === 'H5-O01')!.lifecycle).toBeNull();
      expect(views.filter((row) => row.lifecycle === 'persisting')).toHaveLength(again.lifecycle.persisting);
      expect(views.filter((row) => row.lifecycle === 'new')).toHaveLength(0);
    },
  );
});
