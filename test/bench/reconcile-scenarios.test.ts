import { describe, expect, it } from 'vitest';
import {
  AS_OF,
  reconcileScenarios,
  type BenchTransaction,
  type Scenario,
  type ScenarioKind,
} from '../../bench/reconcile-scenarios.ts';

const ORDERS = 20_000;
const scenarios = [...reconcileScenarios(ORDERS)];
const asOfMs = Date.parse(AS_OF);

/** The arithmetic over the succeeded transactions (S), as the reference statement computes it. */
function sums(transactions: BenchTransaction[]) {
  const s = transactions.filter((t) => t.execCode === '0000');
  const total = (op: string) => s.filter((t) => t.operation === op).reduce((sum, t) => sum + t.amountMinor, 0);
  const paid = total('payment') + total('capture');
  return {
    s,
    paid,
    refunded: total('refund'),
    settled: paid - total('refund'),
    payments: s.filter((t) => t.operation === 'payment' || t.operation === 'capture').length,
  };
}

function expectedOf({ order }: Scenario): number {
  if (order!.status === 'paid') return order!.amountMinor;
  if (order!.status === 'partially_refunded') return order!.amountMinor - order!.refundedMinor;
  return 0;
}

const ofKind = (kind: ScenarioKind) => scenarios.filter((s) => s.kind === kind);

describe('reconcileScenarios', () => {
  it('gives the same sequence for the same seed and another for another seed', () => {
    const again = [...reconcileScenarios(500)];
    expect(again).toEqual(scenarios.slice(0, again.length));
    expect([...reconcileScenarios(500, 7)]).not.toEqual(again);
  });

  it('makes exactly the orders asked for, with distinct ids, and about two transactions each', () => {
    const orders = scenarios.flatMap((s) => (s.order ? [s.order] : []));
    expect(orders).toHaveLength(ORDERS);
    expect(new Set(orders.map((o) => o.orderId)).size).toBe(ORDERS);
    const transactions = scenarios.reduce((n, s) => n + s.transactions.length, 0);
    expect(transactions / ORDERS).toBeGreaterThan(1.9);
    expect(transactions / ORDERS).toBeLessThan(2.1);
  });

  it('holds every kind of situation', () => {
    const kinds = new Set(scenarios.map((s) => s.kind));
    for (const kind of [
      'settled',
      'partially_refunded',
      'refunded',
      'authorized',
      'awaiting_approval',
      'cancelled_unpaid',
      'cancelled_refused',
      'abandoned',
      'missing_at_provider',
      'amount_mismatch',
      'duplicate_payment',
      'currency_mismatch',
      'over_refunded',
      'cancelled_but_paid',
      'unknown_order',
      'unknown_order_refused',
    ] as const) {
      expect(kinds, kind).toContain(kind);
    }
  });

  it('writes transactions as the service exports them, never after AS_OF nor before their order', () => {
    const operations = new Set(['payment', 'authorization', 'capture', 'refund']);
    const execCodes = new Set(['0000', '0002', '0003', '4001']);
    const wrong = scenarios.flatMap(({ order, transactions }) =>
      transactions.filter(
        (t) =>
          !operations.has(t.operation) ||
          !execCodes.has(t.execCode) ||
          !Number.isSafeInteger(t.amountMinor) ||
          t.amountMinor <= 0 ||
          t.occurredMs % 1000 !== 0 ||
          t.occurredMs >= asOfMs ||
          (order !== null && t.occurredMs < order.createdMs),
      ),
    );
    expect(wrong).toEqual([]);
    const tooOld = scenarios.filter(({ order }) => order && asOfMs - order.createdMs > 60 * 86_400_000);
    expect(tooOld).toEqual([]);
  });

  it('keeps the instalment method to EUR orders of 150-2000 EUR paid by authorization and capture', () => {
    const instalments = scenarios.filter((s) => s.order?.method === 'instalment');
    expect(instalments.length).toBeGreaterThan(ORDERS / 4);
    for (const { order, transactions } of instalments) {
      expect(order!.currency).toBe('EUR');
      expect(order!.amountMinor).toBeGreaterThanOrEqual(15_000);
      expect(order!.amountMinor).toBeLessThanOrEqual(200_000);
      expect(transactions.map((t) => t.operation)).not.toContain('payment');
    }
    for (const { order, transactions } of scenarios) {
      if (transactions.some((t) => t.execCode === '0003')) expect(order?.method).toBe('instalment');
    }
  });

  it('settles what the merchant expects for settled and refunded orders, and not for the exceptions', () => {
    for (const kind of [
      'settled',
      'partially_refunded',
      'refunded',
      'cancelled_unpaid',
      'cancelled_refused',
    ] as const) {
      for (const scenario of ofKind(kind)) expect(sums(scenario.transactions).settled, kind).toBe(expectedOf(scenario));
    }
    for (const scenario of ofKind('amount_mismatch'))
      expect(sums(scenario.transactions).settled).not.toBe(expectedOf(scenario));
    for (const scenario of ofKind('duplicate_payment')) expect(sums(scenario.transactions).payments).toBe(2);
    for (const scenario of ofKind('over_refunded')) {
      const { paid, refunded } = sums(scenario.transactions);
      expect(refunded).toBeGreaterThan(paid);
    }
    for (const scenario of ofKind('currency_mismatch')) {
      expect(sums(scenario.transactions).s.some((t) => t.currency !== scenario.order!.currency)).toBe(true);
    }
    for (const scenario of ofKind('cancelled_but_paid')) expect(sums(scenario.transactions).settled).toBeGreaterThan(0);
    for (const kind of ['missing_at_provider', 'abandoned', 'awaiting_approval'] as const) {
      for (const scenario of ofKind(kind)) expect(sums(scenario.transactions).s, kind).toEqual([]);
    }
  });

  it('gives unknown ORDERIDs no order, and a succeeded payment unless the kind says refused', () => {
    for (const { order, transactions } of ofKind('unknown_order')) {
      expect(order).toBeNull();
      expect(sums(transactions).s).toHaveLength(1);
    }
    for (const { order, transactions } of ofKind('unknown_order_refused')) {
      expect(order).toBeNull();
      expect(sums(transactions).s).toHaveLength(0);
    }
  });
});
