import { describe, expect, it } from 'vitest';
import { signParams, validateRequest, verifyHash } from '@recon/protocol';
import { createSandboxClock } from '../../src/clock.ts';
import { createExportDeliveries } from '../../src/export/export-deliveries.ts';
import { handleGetTransactions } from '../../src/export/get-transactions.ts';
import { SCENARIO_OUTCOMES, seedScenario } from '../../src/scenario/seed-scenario.ts';
import type { ScenarioSummary } from '../../src/scenario/seed-scenario.ts';
import { createSandboxStore } from '../../src/store.ts';
import type { SandboxStore, SandboxTransaction } from '../../src/store.ts';
import { createSandboxAccounts } from '../../src/sandbox-accounts.ts';

const IDENTIFIER = 'seeded-shop';
const SECRET = 'seeded-secret';
const NOW = new Date('2026-09-15T09:00:00Z');
const MINUTE = 60 * 1000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

function seeded(seed: number, orders?: number) {
  const store = createSandboxStore();
  const clock = createSandboxClock({ start: NOW, ticking: false });
  const notified: SandboxTransaction[] = [];
  const summary = seedScenario(
    { store, clock, identifier: IDENTIFIER, secret: SECRET, notify: (transaction) => notified.push(transaction) },
    { seed, ...(orders ? { orders } : {}) },
  );
  return { store, clock, summary, notified };
}

async function exportAll(world: ReturnType<typeof seeded>): Promise<unknown> {
  const deliveries = createExportDeliveries();
  const params = signParams(SECRET, {
    OPERATIONTYPE: 'getTransactions',
    IDENTIFIER,
    VERSION: '3.0',
    ORDERID: world.summary.orderIds.join(';'),
  });
  const accounts = createSandboxAccounts([{ identifier: IDENTIFIER, secret: SECRET }]);
  const ctx = { ...world, accounts, baseUrl: 'http://127.0.0.1:1', deliveries };
  const response = await handleGetTransactions(ctx, params);
  expect(response.EXECCODE).toBe('0000');
  return response.DATA;
}

function transactionsOf(store: SandboxStore, orderId: string) {
  const all = store.byOrderId(orderId);
  return {
    origin: all[0]!,
    captures: all.filter((t) => t.operationType === 'capture'),
    refunds: all.filter((t) => t.operationType === 'refund'),
    all,
  };
}

const sum = (transactions: SandboxTransaction[]) => transactions.reduce((total, t) => total + t.amount, 0n);

describe('seedScenario', () => {
  it('gives an identical store and identical export rows for the same seed', async () => {
    const first = seeded(7);
    const second = seeded(7);
    expect(second.summary).toEqual(first.summary);
    expect(second.store.all()).toEqual(first.store.all());
    expect(await exportAll(second)).toEqual(await exportAll(first));
  });

  it('gives different rows for a different seed', async () => {
    const rows7 = (await exportAll(seeded(7))) as Record<string, string>[];
    const rows8 = (await exportAll(seeded(8))) as Record<string, string>[];
    const strip = (rows: Record<string, string>[]) => rows.map(({ ORDERID: _o, ...rest }) => rest);
    expect(strip(rows8)).not.toEqual(strip(rows7));
  });

  it('does not move the clock, and dates everything within the last 14 days', () => {
    const { store, clock } = seeded(11);
    expect(clock.now()).toEqual(NOW);
    for (const transaction of store.all()) {
      expect(transaction.createdAt.getTime()).toBeLessThanOrEqual(NOW.getTime());
      expect(transaction.createdAt.getTime()).toBeGreaterThanOrEqual(NOW.getTime() - 14 * DAY);
      expect(transaction.updatedAt.getTime()).toBeGreaterThanOrEqual(transaction.createdAt.getTime());
    }
    const created = store.all().map((t) => t.createdAt.getTime());
    expect(created).toEqual([...created].sort((a, b) => a - b));
  });

  it('has the orders asked for, each outcome at least once, of both methods and both instalment plans', () => {
    const { store, summary } = seeded(3, 60);
    expect(summary.orderIds).toHaveLength(60);
    expect(new Set(summary.orderIds).size).toBe(60);
    for (const outcome of SCENARIO_OUTCOMES) expect(summary.counts[outcome], outcome).toBeGreaterThan(0);
    expect(Object.values(summary.counts).reduce((a, b) => a + b, 0)).toBe(60);
    expect(summary.transactionCount).toBe(store.all().length);
    const methods = new Set(store.all().map((t) => t.method));
    expect(methods).toEqual(new Set(['instalment', 'wallet']));
    const schedules = new Set(
      store.all().flatMap((t) => (t.schedule ? [`${t.schedule.index}-${t.schedule.count}`] : [])),
    );
    expect(schedules).toEqual(new Set(['1-3', '1-4']));
    expect(() => seeded(3, 5)).toThrow(/at least 15 orders/);
  });

  it('has one order each of the outcomes a merchant must act on, however many orders', () => {
    for (const orders of [15, 40, 200]) {
      const { summary } = seeded(9, orders);
      for (const outcome of [
        'pending-expired',
        'capture-window-closing',
        'capture-window-passed',
        'paid-twice',
      ] as const) {
        expect(summary.counts[outcome], `${outcome} of ${orders}`).toBe(1);
      }
    }
  });

  it('dates the first validated order hours before the clock, and the first awaiting the cardholder minutes before it', () => {
    for (const [seed, orders] of [
      [3, 15],
      [9, 40],
      [1, 2000],
    ] as const) {
      const { store, summary } = seeded(seed, orders);
      const ageOf = (orderId: string) => NOW.getTime() - store.byOrderId(orderId)[0]!.createdAt.getTime();
      const [validated] = summary.ordersByOutcome['validated'];
      const [onThePage] = summary.ordersByOutcome['awaiting-cardholder'];
      expect(ageOf(validated!), `seed ${seed}`).toBeLessThanOrEqual(12 * HOUR + 30 * MINUTE);
      expect(store.byOrderId(validated!)[0]!.execCode).toBe('0000');
      expect(ageOf(onThePage!), `seed ${seed}`).toBeGreaterThanOrEqual(2 * MINUTE);
      expect(ageOf(onThePage!), `seed ${seed}`).toBeLessThanOrEqual(30 * MINUTE);
    }
  });

  it.each([1, 42, 2026])(
    'seed %i: notifies each operation the service notifies, as it ended, in the order they happened',
    (seed) => {
      const { store, summary, notified } = seeded(seed, 200);
      const ofTransaction = (transactionId: string) =>
        notified.filter((n) => n.transactionId === transactionId).map((n) => n.execCode);
      for (const transaction of store.all()) {
        const codes = ofTransaction(transaction.transactionId);
        if (transaction.operationType === 'capture' || transaction.operationType === 'refund')
          expect(codes).toEqual(['0000']);
        else if (transaction.status === 'awaiting-cardholder') expect(codes).toEqual([]);
        // An approval's wait is notified, then its answer if it came; an expiry is not (the export keeps the 0003).
        else if (transaction.status === 'expired' || transaction.status === 'pending-approval')
          expect(codes).toEqual(['0003']);
        else expect(codes.at(-1)).toBe(transaction.execCode);
      }
      for (const orderId of summary.ordersByOutcome['pending-validated'])
        expect(ofTransaction(store.byOrderId(orderId)[0]!.transactionId)).toEqual(['0003', '0000']);
      for (const orderId of summary.ordersByOutcome['pending-refused'])
        expect(ofTransaction(store.byOrderId(orderId)[0]!.transactionId)).toEqual([
          '0003',
          expect.stringMatching(/^4\d{3}$/),
        ]);
      // Each notified as it ended: the record as it stood then, in the order the steps happened.
      const endedAt = notified.map((n) => n.updatedAt.getTime());
      expect(endedAt).toEqual([...endedAt].sort((a, b) => a - b));
      expect(notified.filter((n) => n.execCode === '0002')).toEqual([]);
      const succeeded = store.all().filter((t) => t.execCode === '0000');
      expect(new Set(notified.filter((n) => n.execCode === '0000').map((n) => n.transactionId))).toEqual(
        new Set(succeeded.map((t) => t.transactionId)),
      );
    },
  );

  it.each([1, 2, 3, 42, 2026])('seed %i: every order ends as its outcome says, within the rules', (seed) => {
    const { store, summary } = seeded(seed);
    checkOutcomes(store, summary);
    checkRules(store);
  });
});

function checkOutcomes(store: SandboxStore, summary: ScenarioSummary): void {
  const each = (
    outcome: (typeof SCENARIO_OUTCOMES)[number],
    check: (order: ReturnType<typeof transactionsOf>) => void,
  ) => {
    for (const orderId of summary.ordersByOutcome[outcome]) check(transactionsOf(store, orderId));
  };
  each('awaiting-cardholder', ({ origin, all }) => {
    expect(all).toHaveLength(1);
    expect(origin).toMatchObject({ status: 'awaiting-cardholder', execCode: '0002' });
  });
  each('validated', ({ origin, all }) => {
    expect(all).toHaveLength(1);
    expect(origin).toMatchObject({ status: 'succeeded', execCode: '0000' });
    expect(NOW.getTime() - origin.updatedAt.getTime()).toBeLessThan(5 * DAY);
  });
  each('refused', ({ origin, all }) => {
    expect(all).toHaveLength(1);
    expect(origin.status).toBe('refused');
    expect(origin.execCode).toMatch(/^4\d{3}$/);
  });
  each('pending', ({ origin }) =>
    expect(origin).toMatchObject({ status: 'pending-approval', execCode: '0003', method: 'instalment' }),
  );
  each('pending-expired', ({ origin }) => expect(origin).toMatchObject({ status: 'expired', execCode: '0003' }));
  each('pending-validated', ({ origin }) =>
    expect(origin).toMatchObject({ status: 'succeeded', method: 'instalment' }),
  );
  each('pending-refused', ({ origin }) => expect(origin).toMatchObject({ status: 'refused', method: 'instalment' }));
  each('captured-full', ({ origin, captures, refunds }) => {
    expect(captures.map((c) => c.amount)).toEqual([origin.amount]);
    expect(refunds).toEqual([]);
  });
  each('captured-partial', ({ origin, captures, refunds }) => {
    expect(captures).toHaveLength(1);
    expect(captures[0]!.amount).toBeLessThan(origin.amount);
    expect(refunds).toEqual([]);
  });
  each('capture-window-passed', ({ origin, captures }) => {
    expect(origin).toMatchObject({ operationType: 'authorization', status: 'succeeded' });
    expect(captures).toEqual([]);
    expect(NOW.getTime() - origin.updatedAt.getTime()).toBeGreaterThan(7 * DAY);
  });
  each('capture-window-closing', ({ origin, all }) => {
    expect(all).toHaveLength(1);
    expect(origin).toMatchObject({ operationType: 'authorization', status: 'succeeded' });
    const age = NOW.getTime() - origin.updatedAt.getTime();
    expect(age).toBeGreaterThan(5 * DAY);
    expect(age).toBeLessThan(7 * DAY);
  });
  each('paid-twice', ({ all }) => {
    expect(all).toHaveLength(2);
    expect(all.map((t) => [t.method, t.operationType, t.status, t.execCode])).toEqual([
      ['wallet', 'payment', 'succeeded', '0000'],
      ['wallet', 'payment', 'succeeded', '0000'],
    ]);
    expect(all[1]!.amount).toBe(all[0]!.amount);
    expect(all[1]!.request).toEqual(all[0]!.request);
  });
  const refundedFrom = ({ origin, captures }: ReturnType<typeof transactionsOf>) =>
    store.get((captures[0] ?? origin).transactionId)!;
  each('refunded-full', (order) => {
    expect(order.refunds).toHaveLength(1);
    expect(order.refunds[0]!.amount).toBe(refundedFrom(order).amount);
    expect(refundedFrom(order).restingAmount).toBe(0n);
  });
  each('refunded-partial', (order) => {
    expect(order.refunds).toHaveLength(1);
    expect(refundedFrom(order).restingAmount).toBe(refundedFrom(order).amount - order.refunds[0]!.amount);
    expect(refundedFrom(order).restingAmount).toBeGreaterThan(0n);
  });
  each('refunded-several', (order) => {
    expect(order.refunds.length).toBeGreaterThanOrEqual(2);
    expect(refundedFrom(order).restingAmount).toBe(refundedFrom(order).amount - sum(order.refunds));
  });
}

function checkRules(store: SandboxStore): void {
  for (const transaction of store.all()) {
    const parent = transaction.parentTransactionId ? store.get(transaction.parentTransactionId) : undefined;
    expect(transaction.amount).toBeGreaterThan(0n);
    if (transaction.method === 'instalment' && !parent) {
      expect(transaction.operationType).toBe('authorization');
      expect(transaction.amount).toBeGreaterThanOrEqual(15_000n);
      expect(transaction.amount).toBeLessThanOrEqual(200_000n);
      expect(transaction.paymentOption).toMatch(/^instalpay-[34]x/);
    }
    if (transaction.operationType === 'capture') {
      expect(parent).toMatchObject({
        operationType: 'authorization',
        status: 'succeeded',
        capturedAmount: transaction.amount,
      });
      expect(transaction.amount).toBeLessThanOrEqual(parent!.amount);
      expect(transaction.createdAt.getTime() - parent!.updatedAt.getTime()).toBeLessThanOrEqual(7 * DAY);
      expect(transaction.createdAt.getTime()).toBeGreaterThan(parent!.updatedAt.getTime());
      if (transaction.method === 'instalment') expect(transaction.schedule?.index).toBe(1);
    }
    if (transaction.operationType === 'refund') {
      expect(parent!.operationType).toBe(transaction.method === 'instalment' ? 'capture' : parent!.operationType);
      expect(['payment', 'capture']).toContain(parent!.operationType);
      const refunds = store
        .byOrderId(transaction.orderId)
        .filter((t) => t.parentTransactionId === parent!.transactionId);
      expect(sum(refunds) + parent!.restingAmount!).toBe(parent!.amount);
    }
    // Each recorded request is one the service would have taken, signed with the account's secret.
    expect(verifyHash(SECRET, transaction.request)).toBe(true);
    const method =
      transaction.operationType === 'payment' || transaction.operationType === 'authorization'
        ? transaction.method
        : undefined;
    expect(() => validateRequest(transaction.operationType, method, transaction.request)).not.toThrow();
  }
}
