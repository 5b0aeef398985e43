import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { reconcile } from '../../src/reconcile/reconcile.ts';
import { runVerdicts } from '../../src/report/run-verdicts.ts';
import { ago, DAY, ingestTransactions, insertOrders } from '../reconcile/reconcile-scenario.ts';
import { twoRuns, UNKNOWN_ID } from '../report/report-scenario.ts';
import { BACKENDS, createTestDatabase, hasPostgres, type TestDatabase } from '../support/test-database.ts';
import { readView } from './reporting-seed.ts';

describe.each(BACKENDS)('reporting.run_status_totals on %s', (backend) => {
  const skip = backend === 'postgres' && !hasPostgres;
  let testDb: TestDatabase;
  let tmp: string;
  let runs: string[];
  beforeAll(async () => {
    if (skip) return;
    testDb = await createTestDatabase(backend);
    tmp = await mkdtemp(path.join(os.tmpdir(), 'recon-status-totals-'));
    const { first, second } = await twoRuns(testDb.database, tmp);
    runs = [first.runId, second.runId];
  });
  afterAll(async () => {
    await testDb?.drop();
    if (tmp) await rm(tmp, { recursive: true, force: true });
  });

  const read = (view: string, orderBy = '') => testDb.database.transaction((c) => readView(c, view, orderBy));

  it.skipIf(skip)("gives each run's verdicts per currency and status, as the run gave them", async () => {
    const rows = await read('run_status_totals');
    for (const runId of runs) {
      const verdicts = await testDb.database.db
        .selectFrom(await runVerdicts(testDb.database.db, runId))
        .selectAll()
        .execute();
      const expected = new Map<string, { verdicts: number; expected: bigint; settled: bigint; delta: bigint }>();
      for (const v of verdicts) {
        const key = JSON.stringify([v.currency, v.status]);
        const sum = expected.get(key) ?? { verdicts: 0, expected: 0n, settled: 0n, delta: 0n };
        expected.set(key, {
          verdicts: sum.verdicts + 1,
          expected: sum.expected + BigInt(v.expected_minor),
          settled: sum.settled + BigInt(v.settled_minor),
          delta: sum.delta + BigInt(v.delta_minor),
        });
      }
      const mine = rows.filter((r) => r.run_id === runId);
      expect(
        new Map(
          mine.map((r) => [
            JSON.stringify([r.currency, r.status]),
            {
              verdicts: r.verdicts,
              expected: BigInt(r.expected_minor as string),
              settled: BigInt(r.settled_minor as string),
              delta: BigInt(r.delta_minor as string),
            },
          ]),
        ),
      ).toEqual(expected);
    }
  });

  it.skipIf(skip)("adds up, per run and currency, to the run's bridge in reporting.run_totals", async () => {
    const rows = await read('run_status_totals');
    const totals = await read('run_totals');
    // The scenario has more than one status in a currency: the breakdown is not the total under another name.
    expect(new Set(rows.map((r) => JSON.stringify([r.run_id, r.currency, r.status]))).size).toBeGreaterThan(
      totals.length,
    );
    for (const total of totals) {
      const parts = rows.filter((r) => r.run_id === total.run_id && r.currency === total.currency);
      const sum = (column: string) => parts.reduce((s, r) => s + BigInt(r[column] as string), 0n).toString();
      const count = (column: string) => parts.reduce((s, r) => s + (r[column] as number), 0);
      expect({
        orders: count('orders'),
        unknown_orders: count('unknown_orders'),
        expected_minor: sum('expected_minor'),
        settled_minor: sum('settled_minor'),
        difference_minor: sum('difference_minor'),
      }).toEqual({
        orders: total.orders,
        unknown_orders: total.unknown_orders,
        expected_minor: total.expected_minor,
        settled_minor: total.settled_minor,
        difference_minor: (BigInt(total.settled_minor as string) - BigInt(total.expected_minor as string)).toString(),
      });
    }
    expect(new Set(totals.map((t) => t.currency))).toEqual(new Set(['EUR', 'JPY', 'KWD']));
    const kwd = rows.find((r) => r.run_id === runs[1] && r.currency === 'KWD' && r.status === 'matched');
    expect(kwd).toMatchObject({ expected_minor: '12345', expected: '12.345' });
  });

  it.skipIf(skip)('reads the money at risk of a real run from the figures the run stored', async () => {
    const rows = await read('exceptions', 'first_seen, order_id');
    const atRisk = Object.fromEntries(rows.map((r) => [r.order_id, [r.status, r.at_risk_minor, r.at_risk]]));
    expect(atRisk).toMatchObject({
      'A-1': ['amount_mismatch', '1000', '10.00'],
      'K-2': ['duplicate_payment', '1000', '1.000'],
      [UNKNOWN_ID]: ['unknown_order', '500', '5.00'],
    });
  });
});

describe.each(BACKENDS)('reporting.run_status_totals of verdicts without a currency on %s', (backend) => {
  const skip = backend === 'postgres' && !hasPostgres;
  let testDb: TestDatabase;
  let tmp: string;
  beforeAll(async () => {
    if (skip) return;
    testDb = await createTestDatabase(backend);
    tmp = await mkdtemp(path.join(os.tmpdir(), 'recon-status-totals-xxx-'));
    const asOf = new Date('2026-11-20T12:00:00Z');
    await insertOrders(testDb.database, [{ id: 'E-1', amount: 1000n, status: 'paid', createdAt: ago(asOf, 3 * DAY) }]);
    // An export row without CURRENCY for an ORDERID the books do not have: its verdict has no currency.
    const paid = (id: string, orderId: string, amount: string, currency: string) =>
      ({ id, orderId, type: 'payment', amount, currency, exec: '0000', at: ago(asOf, 2 * DAY) }) as const;
    await ingestTransactions(testDb.database, tmp, [
      paid('TE-1', 'E-1', '10.00', 'EUR'),
      paid('TX-1', 'U-X', '7.00', ''),
    ]);
    await reconcile(testDb.database, { scope: { kind: 'all' }, toleranceMinor: 0n, graceHours: 24, asOf });
  });
  afterAll(async () => {
    await testDb?.drop();
    if (tmp) await rm(tmp, { recursive: true, force: true });
  });

  it.skipIf(skip)('counts them under XXX, as the bridge does, so every part meets its total', async () => {
    const [parts, totals] = await testDb.database.transaction(async (c) => [
      await readView(c, 'run_status_totals'),
      await readView(c, 'run_totals'),
    ]);
    expect(totals.map((t) => [t.currency, t.settled_minor])).toEqual([
      ['EUR', '1000'],
      ['XXX', '700'],
    ]);
    expect(parts.map((p) => [p.currency, p.status, p.settled_minor, p.settled])).toEqual([
      ['EUR', 'matched', '1000', '10.00'],
      ['XXX', 'unknown_order', '700', '7.00'],
    ]);
  });
});
