import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runVerdicts } from '../../src/report/run-verdicts.ts';
import { reconcile, type ReconcileOptions } from '../../src/reconcile/reconcile.ts';
import { sliceRanges } from '../../src/reconcile/slice-ranges.ts';
import { createTestDatabase, hasPostgres, type TestDatabase } from '../support/test-database.ts';
import { waitUntil } from '../support/wait-until.ts';
import {
  ago,
  DAY,
  HOUR,
  ingestTransactions,
  insertOrders,
  type TestOrder,
  type TestTransaction,
} from './reconcile-scenario.ts';

const AS_OF = new Date('2026-11-20T12:00:00Z');

/**
 * A large run on PostgreSQL is written by several connections, one slice of the ORDERID space each (PGlite has one
 * connection and never splits). Each test has a database of its own: `--all` reads every order there is.
 */
describe.skipIf(!hasPostgres)('a run split over several connections', () => {
  let tmp: string;
  const databases: TestDatabase[] = [];
  beforeAll(async () => {
    tmp = await mkdtemp(path.join(os.tmpdir(), 'recon-sliced-'));
  });
  afterAll(async () => {
    await Promise.all(databases.map((testDb) => testDb.drop()));
    if (tmp) await rm(tmp, { recursive: true, force: true });
  });

  async function databaseWith(orders: TestOrder[], transactions: TestTransaction[]): Promise<TestDatabase> {
    const testDb = await createTestDatabase('postgres');
    databases.push(testDb);
    await insertOrders(testDb.database, orders);
    if (transactions.length > 0) await ingestTransactions(testDb.database, tmp, transactions);
    // The cuts come from the planner's statistics, as after any autovacuum.
    await sql`ANALYZE recon.orders`.execute(testDb.database.db);
    return testDb;
  }

  const run = (testDb: TestDatabase, overrides: Partial<ReconcileOptions> = {}) =>
    reconcile(testDb.database, {
      scope: { kind: 'all' },
      asOf: AS_OF,
      toleranceMinor: 0n,
      graceHours: 24,
      ...overrides,
    });
  const sliced = { connections: 3, minOrdersPerSlice: 1 } as const;

  /** Orders of every kind, spread over the ORDERID space so that each slice holds some of each. */
  function mixedScenario(count: number) {
    const orders: TestOrder[] = [];
    const transactions: TestTransaction[] = [];
    for (let i = 0; i < count; i++) {
      const id = `O${String(i).padStart(4, '0')}`;
      const createdAt = ago(AS_OF, 10 * DAY);
      const kind = i % 5;
      orders.push({
        id,
        amount: 10000n,
        status: kind === 3 ? 'authorized' : 'paid',
        createdAt,
        method: kind === 4 ? 'instalment' : 'wallet',
      });
      if (kind === 0)
        transactions.push({
          id: `${id}-p`,
          orderId: id,
          type: 'payment',
          amount: '100.00',
          exec: '0000',
          at: ago(AS_OF, 9 * DAY),
        });
      if (kind === 1)
        transactions.push({
          id: `${id}-p`,
          orderId: id,
          type: 'payment',
          amount: '90.00',
          exec: '0000',
          at: ago(AS_OF, 9 * DAY),
        });
      if (kind === 3)
        transactions.push({
          id: `${id}-a`,
          orderId: id,
          type: 'authorization',
          amount: '100.00',
          exec: '0000',
          at: ago(AS_OF, 8 * DAY),
        });
      if (kind === 4)
        transactions.push({
          id: `${id}-w`,
          orderId: id,
          type: 'authorization',
          amount: '100.00',
          exec: '0003',
          at: ago(AS_OF, 2 * DAY),
        });
    }
    // And an ORDERID that no order has.
    transactions.push({
      id: 'U-1',
      orderId: 'UNKNOWN-1',
      type: 'payment',
      amount: '5.00',
      exec: '0000',
      at: ago(AS_OF, HOUR),
    });
    return { orders, transactions };
  }

  async function verdictsOf(testDb: TestDatabase, runId: string) {
    return testDb.database.db
      .selectFrom(await runVerdicts(testDb.database.db, runId))
      .select([
        'order_id',
        'status',
        'expected_minor',
        'settled_minor',
        'delta_minor',
        'currency',
        'transaction_ids',
        'warnings',
        'explanation',
      ])
      .orderBy('order_id')
      .execute();
  }

  it('cuts the ORDERID space into contiguous ranges at the statistics, and keeps few orders whole', async () => {
    const { orders, transactions } = mixedScenario(300);
    const testDb = await databaseWith(orders, transactions);
    const ranges = await sliceRanges(testDb.database.db, 3, 1);
    expect(ranges).toHaveLength(3);
    expect(ranges[0]!.from).toBeNull();
    expect(ranges.at(-1)!.below).toBeNull();
    for (let i = 1; i < ranges.length; i++) expect(ranges[i]!.from).toBe(ranges[i - 1]!.below);
    // Each range holds about a third of the orders.
    for (const range of ranges) {
      const { rows } = await sql<{ n: number }>`SELECT count(*)::integer AS n FROM recon.orders
        WHERE (${range.from}::text IS NULL OR order_id >= ${range.from}) AND (${range.below}::text IS NULL OR order_id < ${range.below})`.execute(
        testDb.database.db,
      );
      expect(rows[0]!.n).toBeGreaterThan(50);
    }
    expect(await sliceRanges(testDb.database.db, 3)).toEqual([{ from: null, below: null }]);
  });

  it('gives every order the verdict a run in one transaction gives, the bridge and the counts adding up the same', async () => {
    const { orders, transactions } = mixedScenario(300);
    const testDb = await databaseWith(orders, transactions);
    const whole = await run(testDb);
    const split = await run(testDb, sliced);
    expect(split.counts).toEqual(whole.counts);
    expect(split.totals).toEqual(whole.totals);
    expect(split.ordersInScope).toBe(301);
    expect(
      new Set(
        Object.entries(split.counts)
          .filter(([, n]) => n > 0)
          .map(([status]) => status),
      ),
    ).toEqual(
      new Set(['matched', 'amount_mismatch', 'missing_at_provider', 'capture_expired', 'pending', 'unknown_order']),
    );
    expect(await verdictsOf(testDb, split.runId)).toEqual(await verdictsOf(testDb, whole.runId));
    // The lifecycle runs across slices as across runs: every exception of the first run persists.
    expect(split.lifecycle).toEqual({ new: 0, persisting: whole.lifecycle.new, resolved: 0 });
    // Nothing changed: every verdict still holds from the first run.
    const { rows } = await sql<{
      run_id: string;
      n: number;
    }>`SELECT run_id::text, count(*)::integer AS n FROM reporting.reconciliation GROUP BY run_id ORDER BY run_id`.execute(
      testDb.database.db,
    );
    expect(rows).toEqual([{ run_id: whole.runId, n: whole.ordersInScope }]);
    expect(split.verdictsChanged).toBe(0);
  });

  it("sums its slices' parts of the totals per account as a run in one transaction does, and keeps no part", async () => {
    const { orders, transactions } = mixedScenario(300);
    // Accounts and fees on every transaction, and orders whose money went through two accounts or two currencies.
    const accounted = transactions.map((t, i) => ({ ...t, identifier: i % 3 === 0 ? 'ACC-B' : 'ACC-A', fees: '0.25' }));
    for (const [n, second] of [
      [0, { identifier: 'ACC-C' }],
      [50, { currency: 'USD' }],
      [100, { identifier: '' }],
    ] as const) {
      const id = `O${String(n).padStart(4, '0')}`;
      accounted.push({
        id: `${id}-r`,
        orderId: id,
        type: 'refund',
        amount: '10.00',
        exec: '0000',
        at: ago(AS_OF, 8 * DAY),
        identifier: 'ACC-A',
        fees: '0.05',
        ...second,
      });
    }
    const totalsOf = async (testDb: TestDatabase) => {
      const db = testDb.database.db;
      expect(await db.selectFrom('recon.run_account_parts').select('run_id').execute()).toEqual([]);
      return db
        .selectFrom('recon.run_account_totals')
        .select(['identifier', 'currency', 'orders', 'transactions', 'paid_minor', 'refunded_minor', 'fees_minor'])
        .orderBy('identifier')
        .orderBy('currency')
        .execute();
    };
    const whole = await databaseWith(orders, accounted);
    await run(whole);
    const split = await databaseWith(orders, accounted);
    await run(split, sliced);
    const expected = await totalsOf(whole);
    expect(await totalsOf(split)).toEqual(expected);
    expect(expected.map((row) => [row.identifier, row.currency])).toEqual([
      ['ACC-A', 'EUR'],
      ['ACC-A', 'USD'],
      ['ACC-B', 'EUR'],
      ['ACC-C', 'EUR'],
      [null, 'EUR'],
    ]);
    // Every succeeded transaction counted once, whatever slice and account it fell in.
    expect(expected.reduce((sum, row) => sum + row.transactions, 0)).toBe(
      accounted.filter((t) => t.exec === '0000').length,
    );
  });

  it('leaves nothing of a run whose slice failed, the slices that succeeded included', async () => {
    const { orders, transactions } = mixedScenario(300);
    // Two payments whose sum passes a bigint: the statement of the last slice fails on them.
    orders.push({ id: 'Z-overflow', amount: 10000n, status: 'paid', createdAt: ago(AS_OF, 10 * DAY) });
    for (const n of [1, 2]) {
      transactions.push({
        id: `Z-${n}`,
        orderId: 'Z-overflow',
        type: 'payment',
        amount: '50000000000000000.00',
        exec: '0000',
        at: ago(AS_OF, 9 * DAY),
      });
    }
    const testDb = await databaseWith(orders, transactions);
    await expect(run(testDb, sliced)).rejects.toThrow(/bigint out of range/);
    const db = testDb.database.db;
    expect(await db.selectFrom('recon.reconciliation_runs').select('run_id').execute()).toEqual([]);
    expect(await db.selectFrom('recon.verdicts').select('order_id').execute()).toEqual([]);
    expect(await db.selectFrom('recon.run_totals').select('run_id').execute()).toEqual([]);
    expect(await db.selectFrom('recon.run_account_parts').select('run_id').execute()).toEqual([]);
  });

  it('writes a run over current verdicts as one transaction does, and shows none of its changes before it finishes', async () => {
    const { orders, transactions } = mixedScenario(300);
    const whole = await databaseWith(orders, transactions);
    const split = await databaseWith(orders, transactions);
    // Then, on both: captures for some authorized orders, a second payment for some paid ones, the unknown ORDERID's
    // payment gone, and three days later (an instalment's approval wait ends): changed, looked at again, removed.
    const later = new Date(AS_OF.getTime() + 3 * DAY);
    const news: TestTransaction[] = [];
    for (let i = 3; i < 300; i += 25) {
      const id = `O${String(i).padStart(4, '0')}`;
      news.push({ id: `${id}-c`, orderId: id, type: 'capture', amount: '100.00', exec: '0000', at: ago(later, DAY) });
    }
    for (let i = 0; i < 300; i += 40) {
      const id = `O${String(i).padStart(4, '0')}`;
      news.push({ id: `${id}-p2`, orderId: id, type: 'payment', amount: '100.00', exec: '0000', at: ago(later, DAY) });
    }
    for (const testDb of [whole, split]) {
      await run(testDb);
      await ingestTransactions(testDb.database, tmp, news);
      await sql`DELETE FROM recon.transactions WHERE order_id = 'UNKNOWN-1'`.execute(testDb.database.db);
    }
    const wholeRun = await run(whole, { asOf: later, full: true, connections: 1 });

    const current = () =>
      sql`SELECT order_id, status, lifecycle, run_id::text FROM reporting.reconciliation ORDER BY order_id`.execute(
        split.database.db,
      );
    const before = (await current()).rows;
    // The run's last transaction waits for this one: every slice has committed its part by then.
    const holder = new pg.Client({ connectionString: split.env.DATABASE_URL });
    await holder.connect();
    try {
      await holder.query('BEGIN');
      await holder.query('LOCK TABLE recon.run_totals IN SHARE MODE');
      const splitting = run(split, { asOf: later, full: true, ...sliced });
      splitting.catch(() => {});
      await waitUntil('the run to wait for its last transaction', async () => {
        const waiting = await holder.query(
          "SELECT 1 FROM pg_locks WHERE relation = 'recon.run_totals'::regclass AND NOT granted",
        );
        return waiting.rowCount === 1;
      });
      const staged = await holder.query('SELECT count(*)::integer AS n FROM recon.run_verdict_changes');
      expect(staged.rows[0].n).toBeGreaterThan(0);
      expect((await current()).rows).toEqual(before);
      await holder.query('COMMIT');
      const splitRun = await splitting;
      expect(splitRun.verdictsChanged).toBe(wholeRun.verdictsChanged);
      expect(splitRun.verdictsChanged).toBeGreaterThan(20);
    } finally {
      await holder.end();
    }

    const everything = (testDb: TestDatabase) =>
      Promise.all([
        sql`SELECT run_id::text, order_id, status, lifecycle, first_seen_run_id::text, expected_minor::text, settled_minor::text,
            ARRAY(SELECT id FROM unnest(transaction_ids) AS id ORDER BY id) AS transaction_ids, warnings, explanation,
            rejudged_run_id::text, at_risk_minor::text, recheck_at
          FROM recon.verdicts ORDER BY order_id`.execute(testDb.database.db),
        sql`SELECT run_id::text, until_run_id::text, order_id, status, lifecycle, settled_minor::text
          FROM recon.verdict_history ORDER BY order_id, until_run_id`.execute(testDb.database.db),
        sql`SELECT count(*)::integer AS n FROM recon.run_verdict_changes`.execute(testDb.database.db),
      ]).then((results) => results.map((result) => result.rows));
    const [verdicts, history, staged] = await everything(split);
    expect(staged).toEqual([{ n: 0 }]);
    expect(history!.map((row) => (row as { order_id: string }).order_id)).toContain('UNKNOWN-1');
    expect([verdicts, history]).toEqual((await everything(whole)).slice(0, 2));
  });

  it('hides the verdicts of an unfinished run, and the next run removes that run', async () => {
    const { orders, transactions } = mixedScenario(300);
    const testDb = await databaseWith(orders, transactions);
    const db = testDb.database.db;
    const finished = await run(testDb, sliced);
    // What a process killed in the middle of a run over current verdicts leaves: its run row, unfinished, and the
    // changes its committed slices kept apart.
    const { run_id: cutShort } = await db
      .insertInto('recon.reconciliation_runs')
      .values({
        as_of: AS_OF,
        scope: '{"kind":"all"}',
        description: 'all orders and unknown ORDERIDs',
        tolerance_minor: '0',
        grace_hours: 24,
      })
      .returning('run_id')
      .executeTakeFirstOrThrow();
    await sql`INSERT INTO recon.run_verdict_changes (run_id, change, order_id, known, verdict, lifecycle, first_seen_run_id,
        first_seen_at, expected, settled, delta, currency, transaction_ids, warnings, explanation, at_risk, recheck_at)
      SELECT ${cutShort}::bigint, 'changed', order_id, known_order, 'missing_at_provider', 'new', ${cutShort}::bigint, now(),
        0, 0, 0, currency, transaction_ids, warnings, '{}', 0, NULL
      FROM recon.verdicts WHERE order_id < 'O0100'`.execute(db);

    const current = await sql<{
      run_id: string;
      n: number;
    }>`SELECT run_id::text, count(*)::integer AS n FROM reporting.reconciliation GROUP BY run_id`.execute(db);
    expect(current.rows).toEqual([{ run_id: finished.runId, n: 301 }]);
    const daily = await sql<{
      exceptions: number;
    }>`SELECT sum(exceptions)::integer AS exceptions FROM reporting.daily_summary`.execute(db);
    expect(daily.rows[0]!.exceptions).toBe(
      finished.ordersInScope - finished.counts.matched - finished.counts.pending - finished.counts.unknown_order,
    );

    const next = await run(testDb, sliced);
    expect(await db.selectFrom('recon.reconciliation_runs').select('run_id').orderBy('run_id').execute()).toEqual(
      [{ run_id: finished.runId }, { run_id: next.runId }].map(({ run_id }) => ({
        run_id: expect.toSatisfy((value: unknown) => String(value) === run_id),
      })),
    );
    expect(await db.selectFrom('recon.run_verdict_changes').select('run_id').execute()).toEqual([]);
    // The run cut short never counted: the next run's exceptions persist from the finished one, and it changed none.
    expect(next.lifecycle.new).toBe(0);
    expect(next.verdictsChanged).toBe(0);
  });
});
