import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { reconcile, type RunSummary } from '../../src/reconcile/reconcile.ts';
import { loadRunReport } from '../../src/report/report-queries.ts';
import { DAY, ingestTransactions, insertOrders } from '../reconcile/reconcile-scenario.ts';
import { BACKENDS, createTestDatabase, hasPostgres, type TestDatabase } from '../support/test-database.ts';
import { MORNING, morningRun, WALLET } from './morning-scenario.ts';

interface Line {
  currency: string;
  line: string;
  orders: number | null;
  transactions: number | null;
  amount_minor: string;
  fees_minor: string | null;
}

/**
 * reporting.received_to_bridge: from the money a run's orders received in a currency to its bridge's settled, every
 * line adding up, on both backends, over a real run with a currency mismatch, an unknown ORDERID in two currencies,
 * a payment without a CURRENCY, refunds and fees; then over a run that judged only what changed.
 */
describe.each(BACKENDS)('money received to the bridge on %s', (backend) => {
  const skip = backend === 'postgres' && !hasPostgres;
  let testDb: TestDatabase;
  let dir: string;
  let first: RunSummary;
  beforeAll(async () => {
    if (skip) return;
    testDb = await createTestDatabase(backend);
    dir = await mkdtemp(path.join(os.tmpdir(), 'recon-received-'));
    first = await morningRun(testDb.database, dir);
  });
  afterAll(async () => {
    await testDb?.drop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  const linesOf = async (runId: string) =>
    (
      await sql<Line>`SELECT currency, line, orders, transactions, amount_minor::text AS amount_minor,
          fees_minor::text AS fees_minor
        FROM reporting.received_to_bridge WHERE run_id = ${runId}::bigint ORDER BY currency, step`.execute(
        testDb.database.db,
      )
    ).rows.map((row) => ({ ...row, currency: row.currency.trim() }));

  /** Each currency's lines but the last add up to the last, the settled of its bridge (0 without one). */
  const expectLinesAddUp = async (runId: string) => {
    const lines = await linesOf(runId);
    const bridge = await testDb.database.db
      .selectFrom('recon.run_totals')
      .select(['currency', sql<string>`settled_minor::text`.as('settled')])
      .where('run_id', '=', runId)
      .execute();
    const currencies = [...new Set(lines.map((line) => line.currency))];
    expect(currencies).toEqual(expect.arrayContaining(bridge.map((row) => row.currency.trim())));
    for (const currency of currencies) {
      const own = lines.filter((line) => line.currency === currency);
      const settled = own.at(-1)!;
      expect(settled.line, currency).toBe('settled');
      expect(
        own.filter((line) => line.line === 'settled'),
        currency,
      ).toHaveLength(1);
      const sum = own.slice(0, -1).reduce((total, line) => total + BigInt(line.amount_minor), 0n);
      expect(sum.toString(), currency).toBe(settled.amount_minor);
      expect(settled.amount_minor, currency).toBe(
        bridge.find((row) => row.currency.trim() === currency)?.settled ?? '0',
      );
      expect(own.map((line) => line.line)).not.toContain('not_explained');
    }
    return lines;
  };

  it.skipIf(skip)('judges the scenario as it says', async () => {
    const verdicts = await testDb.database.db
      .selectFrom('recon.verdicts')
      .select(['order_id', 'status', 'currency', sql<string>`settled_minor::text`.as('settled')])
      .orderBy('order_id')
      .execute();
    expect(verdicts.map((v) => [v.order_id, v.status, v.currency, v.settled])).toEqual([
      ['C-1', 'capture_expired', 'EUR', '0'],
      ['K-1', 'over_refunded', 'KWD', '-12345'],
      ['M-1', 'matched', 'EUR', '10000'],
      ['M-2', 'matched', 'EUR', '5000'],
      ['N-1', 'matched', 'EUR', '2000'],
      ['U-1', 'unknown_order', 'EUR', '800'],
      ['W-1', 'matched', 'EUR', '4000'],
      ['X-USD', 'currency_mismatch', 'USD', '0'],
    ]);
  });

  it.skipIf(skip)("takes each currency's money received down to its bridge's settled, line by line", async () => {
    const lines = await expectLinesAddUp(first.runId);
    expect(
      lines.map(({ currency, line, amount_minor, fees_minor }) => [currency, line, amount_minor, fees_minor]),
    ).toEqual([
      // 100.00 + 80.00 - 30.00 + 520.43 (for the USD order) + 40.00 + 5.00 (unknown U-1), and their fees.
      ['EUR', 'received', '71543', '860'],
      ['EUR', 'paid_for_another_currency', '-52043', null],
      // U-1's 3.00 GBP counts in EUR, the currency of its first transaction; N-1's 20.00 without one in its order's.
      ['EUR', 'unknown_from_another_currency', '300', null],
      ['EUR', 'without_currency', '2000', null],
      ['EUR', 'settled', '21800', null],
      ['GBP', 'received', '300', '0'],
      ['GBP', 'unknown_to_another_currency', '-300', null],
      ['GBP', 'settled', '0', null],
      ['KWD', 'received', '-12345', '120'],
      ['KWD', 'settled', '-12345', null],
      // The USD order's money came in EUR: its bridge settled nothing.
      ['USD', 'settled', '0', null],
    ]);
    expect(lines.find((line) => line.currency === 'EUR' && line.line === 'received')).toMatchObject({
      orders: 6,
      transactions: 7,
    });
    expect(lines.find((line) => line.currency === 'EUR' && line.line === 'settled')).toMatchObject({ orders: 6 });
  });

  it.skipIf(skip)('keeps what each account settled, its fees beside, the same after the split by bridge', async () => {
    const accounts = await sql<{
      identifier: string;
      currency: string | null;
      orders: number;
      settled: string;
      fees: string;
    }>`
      SELECT identifier, currency, orders, settled_minor::text AS settled, fees_minor::text AS fees
      FROM reporting.run_account_totals WHERE run_id = ${first.runId}::bigint
      ORDER BY identifier, currency NULLS LAST`.execute(testDb.database.db);
    expect(accounts.rows.map((row) => ({ ...row, currency: row.currency?.trim() ?? null }))).toEqual([
      { identifier: 'SHOP-INST', currency: 'EUR', orders: 1, settled: '4000', fees: '40' },
      { identifier: WALLET, currency: 'EUR', orders: 5, settled: '67543', fees: '820' },
      { identifier: WALLET, currency: 'GBP', orders: 1, settled: '300', fees: '0' },
      { identifier: WALLET, currency: 'KWD', orders: 1, settled: '-12345', fees: '120' },
      { identifier: WALLET, currency: null, orders: 1, settled: '2000', fees: '0' },
    ]);
  });

  it.skipIf(skip)('adds up for a run that judged only what changed, and leaves the run before as it was', async () => {
    const before = await linesOf(first.runId);
    await ingestTransactions(testDb.database, dir, [
      {
        id: 'T-M1R',
        orderId: 'M-1',
        type: 'refund',
        amount: '10.00',
        exec: '0000',
        at: new Date(MORNING.getTime() + 20 * 3_600_000),
        fees: '0.10',
      },
      {
        id: 'T-U3',
        orderId: 'U-3',
        type: 'payment',
        amount: '1500',
        currency: 'JPY',
        exec: '0000',
        at: new Date(MORNING.getTime() + 21 * 3_600_000),
      },
    ]);
    const second = await reconcile(testDb.database, {
      scope: { kind: 'all' },
      asOf: new Date(MORNING.getTime() + DAY),
      toleranceMinor: 0n,
      graceHours: 24,
    });
    expect(second.verdictsComputed).toBeLessThan(second.ordersInScope);
    const lines = await expectLinesAddUp(second.runId);
    expect(lines.find((line) => line.currency === 'EUR' && line.line === 'received')).toMatchObject({
      amount_minor: '70543',
      fees_minor: '870',
    });
    expect(lines.filter((line) => line.currency === 'JPY').map((line) => [line.line, line.amount_minor])).toEqual([
      ['received', '1500'],
      ['settled', '1500'],
    ]);
    expect(await linesOf(first.runId)).toEqual(before);
  });

  it.skipIf(skip)("adds up for a run that found nothing changed and took its base run's totals", async () => {
    const latest = await testDb.database.db
      .selectFrom('recon.reconciliation_runs')
      .select(sql<string>`max(run_id)::text`.as('run_id'))
      .executeTakeFirstOrThrow();
    const unchanged = await reconcile(testDb.database, {
      scope: { kind: 'all' },
      asOf: new Date(MORNING.getTime() + DAY + 3_600_000),
      toleranceMinor: 0n,
      graceHours: 24,
    });
    expect(unchanged.verdictsComputed).toBe(0);
    const strip = (lines: Line[]) => lines.map(({ currency, line, amount_minor }) => [currency, line, amount_minor]);
    expect(strip(await expectLinesAddUp(unchanged.runId))).toEqual(strip(await linesOf(latest.run_id)));
  });

  it.skipIf(skip)(
    'adds up for a run whose orders changed while no transaction did, and for one that found the same',
    async () => {
      const strip = (lines: Line[]) => lines.map(({ currency, line, amount_minor }) => [currency, line, amount_minor]);
      const before = await linesOf(
        (
          await reconcile(testDb.database, {
            scope: { kind: 'all' },
            asOf: new Date(MORNING.getTime() + DAY + 3_600_000),
            toleranceMinor: 0n,
            graceHours: 24,
          })
        ).runId,
      );
      // U-1's order arrives: its money, 5.00 EUR and 3.00 GBP, was an unknown ORDERID's, counted in EUR.
      await insertOrders(testDb.database, [
        { id: 'U-1', amount: 500n, status: 'paid', createdAt: new Date(MORNING.getTime() - 2 * DAY) },
      ]);
      const arrived = await reconcile(testDb.database, {
        scope: { kind: 'all' },
        asOf: new Date(MORNING.getTime() + DAY + 2 * 3_600_000),
        toleranceMinor: 0n,
        graceHours: 24,
      });
      expect([arrived.verdictsComputed, arrived.verdictsChanged]).toEqual([1, 1]);
      const lines = await expectLinesAddUp(arrived.runId);
      expect(strip(lines)).not.toEqual(strip(before));
      expect(lines.map((line) => line.line)).not.toContain('unknown_from_another_currency');

      // Looked at again and found the same: the run takes what its base computed.
      const settled = await reconcile(testDb.database, {
        scope: { kind: 'all' },
        asOf: new Date(MORNING.getTime() + DAY + 2 * 3_600_000),
        toleranceMinor: 0n,
        graceHours: 24,
      });
      await sql`UPDATE recon.verdicts SET recheck_at = ${new Date(MORNING.getTime() + DAY)}
      WHERE order_id = 'M-1'`.execute(testDb.database.db);
      const same = await reconcile(testDb.database, {
        scope: { kind: 'all' },
        asOf: new Date(MORNING.getTime() + DAY + 3 * 3_600_000),
        toleranceMinor: 0n,
        graceHours: 24,
      });
      expect([same.verdictsComputed, same.verdictsChanged]).toEqual([1, 0]);
      expect(strip(await expectLinesAddUp(same.runId))).toEqual(strip(await linesOf(settled.runId)));
    },
  );

  it.skipIf(skip)('is what the report reads, with the last day of the money first', async () => {
    const report = await loadRunReport(testDb.database.db, first.runId, { timeZone: 'Europe/Paris' });
    const lines = await linesOf(first.runId);
    expect(report.receivedToBridge.map((line) => [line.currency, line.line, line.amountMinor, line.feesMinor])).toEqual(
      lines.map((line) => [line.currency, line.line, line.amount_minor, line.fees_minor]),
    );
    // The run at 06:30 Paris: nothing moved on the 20th yet, so the 19th is its last day.
    expect(report.moneyMoved.window).toEqual({ from: '2026-11-10', to: '2026-11-19' });
    const eurLastDay = report.moneyMoved.days.filter((day) => day.day === '2026-11-19' && day.currency === 'EUR');
    expect(eurLastDay.map((day) => [day.paidMinor, day.refundedMinor, day.feesMinor, day.netMinor])).toEqual([
      ['56543', '3000', '590', '52953'],
    ]);
    // capture_expired: no difference, and its authorized 75.00 at risk beside it.
    expect(report.statusTotals.find((part) => part.status === 'capture_expired')).toMatchObject({
      differenceMinor: '0',
      atRiskMinor: '7500',
    });
  });
});
