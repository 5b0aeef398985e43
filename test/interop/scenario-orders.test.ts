import { parse } from 'csv-parse/sync';
import { describe, expect, it } from 'vitest';
import { createCsvOrderNormalizer, planOrderHeader } from '../../src/orders/order-csv.ts';
import type { ReconcileScope } from '../../src/reconcile/reconcile-scope.ts';
import {
  createSandboxClock,
  createSandboxStore,
  expectedVerdict,
  formatOrdersCsv,
  scenarioOrders,
  seedScenario,
  type MerchantOrder,
  type SandboxTransaction,
} from '@recon/sandbox';

const SEEDED_AT = new Date('2026-09-15T09:00:00Z');
const SECOND = 1000;
const HOUR = 3600 * SECOND;
const DAY = 24 * HOUR;
const DEFAULTS = { graceHours: 24, toleranceMinor: 0n };

function seeded(seed: number, orders?: number) {
  const store = createSandboxStore();
  const clock = createSandboxClock({ start: SEEDED_AT, ticking: false });
  const scenario = seedScenario(
    { store, clock, identifier: 'SHOP', secret: 'k', notify: () => {} },
    { seed, ...(orders ? { orders } : {}) },
  );
  return { store, scenario };
}

describe('scenarioOrders', () => {
  it.each([
    [1, 40],
    [42, 40],
    [2026, 40],
    [3, 15],
    [8, 300],
  ])(
    'seed %i, %i orders: one of each mistake, and every verdict the scenario can give at the seeding instant',
    (seed, count) => {
      const { store, scenario } = seeded(seed, count);
      const orders = scenarioOrders(store, scenario, SEEDED_AT);
      expect(orders.map((order) => order.orderId)).toEqual(scenario.orderIds);

      const mistakes = orders.flatMap((order) => (order.discrepancy ? [[order.discrepancy, order.expected]] : []));
      expect(Object.fromEntries(mistakes)).toEqual({
        'left-out': 'unknown_order',
        'other-currency': 'currency_mismatch',
        'cancelled-but-captured': 'status_mismatch',
        'partial-capture-not-booked': 'amount_mismatch',
        'paid-but-failed': 'missing_at_provider',
        'booked-before-paid': 'pending',
      });
      expect(mistakes).toHaveLength(6);
      expect(orders.filter((order) => order.order === undefined).map((order) => order.discrepancy)).toEqual([
        'left-out',
      ]);

      const statuses = orders.map((order) => order.expected);
      expect(new Set(statuses)).toEqual(
        new Set([
          'matched',
          'pending',
          'unknown_order',
          'currency_mismatch',
          'duplicate_payment',
          'status_mismatch',
          'amount_mismatch',
          'approval_expired',
          'capture_expired',
          'capture_at_risk',
          'missing_at_provider',
        ]),
      );
      const byOutcome = (outcome: string) =>
        orders.filter((order) => order.outcome === outcome && !order.discrepancy).map((order) => order.expected);
      expect(byOutcome('paid-twice')).toEqual(['duplicate_payment']);
      expect(byOutcome('pending-expired')).toEqual(['approval_expired']);
      expect(byOutcome('capture-window-passed')).toEqual(['capture_expired']);
      expect(byOutcome('capture-window-closing')).toEqual(['capture_at_risk']);
      expect(byOutcome('pending').every((status) => status === 'pending')).toBe(true);
      if (count >= 40) expect(statuses.filter((status) => status === 'matched').length).toBeGreaterThan(count / 2);
    },
  );

  it.each([
    [1, 40],
    [3, 15],
    [8, 300],
    [1, 2000],
  ])(
    'seed %i, %i orders: at the seeding instant, a young order whose money is in is matched, one whose money is awaited pending',
    (seed, count) => {
      const { store, scenario } = seeded(seed, count);
      const orders = scenarioOrders(store, scenario, SEEDED_AT);
      const young = orders.filter(({ order }) => order && SEEDED_AT.getTime() - order.createdAt.getTime() < DAY);
      const codes = (orderId: string) => store.byOrderId(orderId).map((transaction) => transaction.execCode);
      const moneyIn = young.filter(
        ({ orderId, expected }) => expected === 'matched' && codes(orderId).includes('0000'),
      );
      expect(moneyIn.length).toBeGreaterThan(0);
      // Awaited without an approval wait: only the grace period keeps it pending.
      const awaited = young.filter(
        ({ orderId, expected }) =>
          expected === 'pending' && !codes(orderId).some((code) => code === '0000' || code === '0003'),
      );
      expect(awaited.map(({ discrepancy, order }) => [discrepancy, order!.status])).toEqual([
        ['booked-before-paid', expect.stringMatching(/^(paid|authorized)$/)],
      ]);
      // A day on, its money still not in, it is missing; the young orders whose money was in stay matched.
      const dayLater = new Map(
        scenarioOrders(store, scenario, new Date(SEEDED_AT.getTime() + DAY)).map((order) => [
          order.orderId,
          order.expected,
        ]),
      );
      expect(dayLater.get(awaited[0]!.orderId)).toBe('missing_at_provider');
      expect(moneyIn.filter(({ orderId }) => dayLater.get(orderId) !== 'matched')).toEqual([]);
    },
  );

  it('gives each ORDERID the verdict of a run of the scope it is told: the left-out order is unknown_order where the scope holds it', () => {
    const { store, scenario } = seeded(42);
    const expectedIn = (scope?: ReconcileScope) =>
      new Map(
        scenarioOrders(store, scenario, SEEDED_AT, scope ? { scope } : {}).map((order) => [
          order.orderId,
          order.expected,
        ]),
      );
    const all = expectedIn();
    const leftOut = scenarioOrders(store, scenario, SEEDED_AT).find(
      (order) => order.discrepancy === 'left-out',
    )!.orderId;
    const booked = scenario.orderIds.filter((orderId) => orderId !== leftOut);
    expect(all.get(leftOut)).toBe('unknown_order');
    expect(expectedIn({ kind: 'all' })).toEqual(all);

    // A nightly run that asks about the merchant's orders alone never judges it; one that also asks about the
    // ORDERIDs of its notifications does.
    const ofBooks = expectedIn({ kind: 'orders', orderIds: booked });
    expect(ofBooks.get(leftOut)).toBeNull();
    expect([...ofBooks].filter(([orderId]) => orderId !== leftOut)).toEqual(
      [...all].filter(([orderId]) => orderId !== leftOut),
    );
    expect(expectedIn({ kind: 'orders', orderIds: [...booked, leftOut] })).toEqual(all);

    // A few orders by id, or by creation date: the others, and the left-out order, get no verdict.
    const few = expectedIn({ kind: 'orders', orderIds: booked.slice(0, 3) });
    expect([...few].filter(([, expected]) => expected !== null).map(([orderId]) => orderId)).toEqual(
      booked.slice(0, 3),
    );
    const since = new Date(SEEDED_AT.getTime() - 2 * DAY);
    const recent = expectedIn({ kind: 'created_since', since });
    const createdSince = scenarioOrders(store, scenario, SEEDED_AT)
      .filter(({ order }) => order && order.createdAt >= since)
      .map(({ orderId }) => orderId);
    expect(createdSince.length).toBeGreaterThan(0);
    expect([...recent].filter(([, expected]) => expected !== null).map(([orderId]) => orderId)).toEqual(createdSince);
    expect(recent.get(leftOut)).toBeNull();
  });

  it("books every order truly except the mistakes: amounts, refunds and statuses from the service's records", () => {
    const { store, scenario } = seeded(5);
    const plain = scenarioOrders(store, scenario, SEEDED_AT).filter((order) => !order.discrepancy);
    const booked = (outcome: string) => plain.filter((order) => order.outcome === outcome).map((order) => order.order!);
    for (const order of booked('captured-full')) {
      const [authorization, capture] = store.byOrderId(order.orderId);
      expect(order).toMatchObject({
        status: 'paid',
        amount: capture!.amount,
        refunded: 0n,
        currency: 'EUR',
        paymentMethod: authorization!.method,
      });
      expect(order.createdAt.getTime()).toBe(Math.floor(authorization!.createdAt.getTime() / SECOND) * SECOND);
    }
    for (const order of booked('refunded-partial')) expect(order.status).toBe('partially_refunded');
    for (const order of booked('refunded-full'))
      expect(order).toMatchObject({ status: 'refunded', refunded: order.amount });
    for (const order of [...booked('refused'), ...booked('awaiting-cardholder')])
      expect(order.status).toBe('cancelled');
    for (const order of [...booked('pending'), ...booked('capture-window-passed')])
      expect(order.status).toBe('authorized');
    for (const order of booked('paid-twice')) expect(order.amount).toBe(store.byOrderId(order.orderId)[0]!.amount);
  });

  it('gives the same csv whatever the instant; only the expected verdicts age', () => {
    const { store, scenario } = seeded(42);
    const now = scenarioOrders(store, scenario, SEEDED_AT);
    const later = scenarioOrders(store, scenario, new Date(SEEDED_AT.getTime() + 3 * DAY));
    expect(formatOrdersCsv(later)).toBe(formatOrdersCsv(now));
    const closing = now.find((order) => order.outcome === 'capture-window-closing')!;
    expect(closing.expected).toBe('capture_at_risk');
    expect(later.find((order) => order.orderId === closing.orderId)!.expected).toBe('capture_expired');
  });
});

describe('formatOrdersCsv', () => {
  it("writes what recon's order csv reader takes back to the same orders, the left-out order not at all", () => {
    const { store, scenario } = seeded(2026);
    const orders = scenarioOrders(store, scenario, SEEDED_AT);
    const csv = formatOrdersCsv(orders);
    const [header, ...records] = parse(csv, { delimiter: ';' });
    expect(header).toEqual([
      'order_id',
      'amount',
      'currency',
      'status',
      'refunded_amount',
      'payment_method',
      'created_at',
    ]);
    const normalize = createCsvOrderNormalizer(planOrderHeader(header!, 'orders.csv'));
    const read = records.map((values) => normalize(values));
    const kept = orders.flatMap((order) => (order.order ? [order.order] : []));
    expect(read).toEqual(
      kept.map((order) => ({
        ok: true,
        row: {
          order_id: order.orderId,
          amount_minor: order.amount,
          currency: order.currency,
          status: order.status,
          refunded_minor: order.refunded,
          payment_method: order.paymentMethod,
          created_at: order.createdAt.toISOString().replace('.000Z', 'Z'),
        },
      })),
    );
    expect(csv).toContain(';USD;');
  });
});

describe('expectedVerdict', () => {
  const AS_OF = new Date('2026-06-20T12:00:00Z');
  const ago = (ms: number) => new Date(AS_OF.getTime() - ms);
  let sequence = 0;
  const tx = (
    fields: Partial<SandboxTransaction> & Pick<SandboxTransaction, 'operationType' | 'amount' | 'createdAt'>,
  ): SandboxTransaction => ({
    transactionId: `T${++sequence}`,
    orderId: 'O1',
    identifier: 'SHOP',
    method: 'instalment',
    currency: 'EUR',
    execCode: '0000',
    message: '',
    status: 'succeeded',
    updatedAt: fields.createdAt,
    request: {},
    ...fields,
  });
  const order = (fields: Partial<MerchantOrder>): MerchantOrder => ({
    orderId: 'O1',
    amount: 10_000n,
    currency: 'EUR',
    status: 'authorized',
    refunded: 0n,
    paymentMethod: 'instalment',
    createdAt: ago(30 * DAY),
    ...fields,
  });
  const authorizedAgo = (ms: number) => [tx({ operationType: 'authorization', amount: 10_000n, createdAt: ago(ms) })];
  const waitingSince = (ms: number) => [
    tx({ operationType: 'authorization', amount: 10_000n, execCode: '0003', createdAt: ago(ms) }),
  ];
  const refusedAgo = (ms: number) => [
    tx({ operationType: 'authorization', amount: 10_000n, execCode: '4001', status: 'refused', createdAt: ago(ms) }),
  ];
  const paidAgo = (ms: number) => [
    tx({ operationType: 'payment', method: 'wallet', amount: 10_000n, createdAt: ago(ms) }),
  ];
  const abandonedAgo = (ms: number) => [
    tx({
      operationType: 'payment',
      method: 'wallet',
      amount: 10_000n,
      execCode: '0002',
      status: 'awaiting-cardholder',
      createdAt: ago(ms),
    }),
  ];

  it.each([
    ['an approval awaited exactly 6 days', order({}), waitingSince(6 * DAY), 'approval_expired'],
    ['an approval awaited a second less', order({}), waitingSince(6 * DAY - SECOND), 'pending'],
    ['an authorization exactly 7 days old', order({}), authorizedAgo(7 * DAY), 'capture_expired'],
    ['an authorization a second younger', order({}), authorizedAgo(7 * DAY - SECOND), 'capture_at_risk'],
    ['an authorization exactly 5 days old', order({}), authorizedAgo(5 * DAY), 'capture_at_risk'],
    ['an authorization a second younger than 5 days', order({}), authorizedAgo(5 * DAY - SECOND), 'matched'],
    [
      'an order exactly as old as the grace period, without its authorization',
      order({ createdAt: ago(24 * HOUR) }),
      [],
      'missing_at_provider',
    ],
    [
      'an order a second younger, without its authorization',
      order({ createdAt: ago(24 * HOUR - SECOND) }),
      [],
      'pending',
    ],
    ['a young order whose authorization is in', order({ createdAt: ago(2 * HOUR) }), authorizedAgo(HOUR), 'matched'],
    ['a young order whose authorization was refused', order({ createdAt: ago(2 * HOUR) }), refusedAgo(HOUR), 'pending'],
    [
      'a young order whose authorization is of another amount',
      order({ amount: 9_999n, createdAt: ago(2 * HOUR) }),
      authorizedAgo(HOUR),
      'amount_mismatch',
    ],
    ['an authorization of another amount', order({ amount: 9_999n }), authorizedAgo(HOUR), 'amount_mismatch'],
    ['an order with no transaction, old', order({ status: 'paid' }), [], 'missing_at_provider'],
    ['an order with no transaction, in grace', order({ status: 'paid', createdAt: ago(HOUR) }), [], 'pending'],
    [
      'a young order whose payment is in',
      order({ status: 'paid', paymentMethod: 'wallet', createdAt: ago(HOUR) }),
      paidAgo(HOUR),
      'matched',
    ],
    [
      'a young order whose payment was abandoned (0002)',
      order({ status: 'paid', paymentMethod: 'wallet', createdAt: ago(HOUR) }),
      abandonedAgo(HOUR),
      'pending',
    ],
  ])('%s: %s', (_case, merchant, transactions, status) => {
    expect(expectedVerdict(merchant, transactions, AS_OF, DEFAULTS)).toBe(status);
  });

  it('judges money with the tolerance', () => {
    const paid = [tx({ operationType: 'payment', method: 'wallet', amount: 10_001n, createdAt: ago(2 * DAY) })];
    const merchant = order({ status: 'paid', paymentMethod: 'wallet' });
    expect(expectedVerdict(merchant, paid, AS_OF, DEFAULTS)).toBe('amount_mismatch');
    expect(expectedVerdict(merchant, paid, AS_OF, { ...DEFAULTS, toleranceMinor: 1n })).toBe('matched');
  });

  it('knows over_refunded, which the sandbox never records, and gives no verdict to an unknown ORDERID without success', () => {
    const payment = tx({ operationType: 'payment', method: 'wallet', amount: 5_000n, createdAt: ago(3 * DAY) });
    const refund = tx({ operationType: 'refund', method: 'wallet', amount: 6_000n, createdAt: ago(2 * DAY) });
    expect(
      expectedVerdict(
        order({ status: 'refunded', refunded: 5_000n, amount: 5_000n }),
        [payment, refund],
        AS_OF,
        DEFAULTS,
      ),
    ).toBe('over_refunded');
    expect(
      expectedVerdict(
        undefined,
        [tx({ operationType: 'payment', amount: 1n, execCode: '4001', createdAt: ago(DAY) })],
        AS_OF,
        DEFAULTS,
      ),
    ).toBeNull();
    expect(expectedVerdict(undefined, [payment], AS_OF, DEFAULTS)).toBe('unknown_order');
  });

  it("measures ages from the export's DATE, the creation to the second, not from the last change", () => {
    // Created half a second less than 7 days ago and validated a day later: the DATE, to the second, says 7 days.
    const authorization = tx({
      operationType: 'authorization',
      amount: 10_000n,
      createdAt: ago(7 * DAY - 500),
      updatedAt: ago(6 * DAY),
    });
    expect(expectedVerdict(order({}), [authorization], AS_OF, DEFAULTS)).toBe('capture_expired');
  });
});
