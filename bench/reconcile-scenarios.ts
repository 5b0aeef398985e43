import { mulberry32 } from './generate-export.ts';

/**
 * The merchant's orders and what the service did for each, for the reconciliation benchmark: a seeded mix of the
 * situations a real month holds (mostly settled orders, refunds, refused and abandoned attempts, approvals still
 * pending, and the exceptions recon exists to find), shaped by the rules of payment-api-3.0.md: instalments are
 * EUR, 150-2000 EUR, authorization then one capture; the wallet pays directly or authorizes then captures.
 * Ages are measured from AS_OF, a fixed instant the benchmark passes to `recon reconcile --as-of`, so that the
 * same seed gives the same rows and the same verdicts on any day.
 */
export const AS_OF = '2026-11-20T00:00:00.000Z';
const AS_OF_MS = Date.parse(AS_OF);
const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

export type OrderStatus = 'paid' | 'authorized' | 'cancelled' | 'refunded' | 'partially_refunded';
export type PaymentMethod = 'instalment' | 'wallet';
export type Operation = 'payment' | 'authorization' | 'capture' | 'refund';

export interface BenchOrder {
  orderId: string;
  amountMinor: number;
  currency: string;
  status: OrderStatus;
  refundedMinor: number;
  method: PaymentMethod;
  createdMs: number;
}

export interface BenchTransaction {
  orderId: string;
  operation: Operation;
  execCode: string;
  amountMinor: number;
  currency: string;
  occurredMs: number;
}

/** What the generator meant an order to be; recon's verdict may differ by age (a recent order without its money is `pending`). */
export type ScenarioKind =
  | 'settled'
  | 'partially_refunded'
  | 'refunded'
  | 'authorized'
  | 'awaiting_approval'
  | 'cancelled_unpaid'
  | 'cancelled_refused'
  | 'abandoned'
  | 'missing_at_provider'
  | 'amount_mismatch'
  | 'duplicate_payment'
  | 'currency_mismatch'
  | 'over_refunded'
  | 'cancelled_but_paid'
  | 'unknown_order'
  | 'unknown_order_refused';

export interface Scenario {
  kind: ScenarioKind;
  /** null for transactions whose ORDERID the merchant does not know. */
  order: BenchOrder | null;
  transactions: BenchTransaction[];
}

const KINDS: ReadonlyArray<readonly [ScenarioKind, number]> = [
  ['settled', 0.75],
  ['partially_refunded', 0.06],
  ['refunded', 0.03],
  ['authorized', 0.04],
  ['awaiting_approval', 0.015],
  ['cancelled_unpaid', 0.03],
  ['cancelled_refused', 0.03],
  ['abandoned', 0.01],
  ['missing_at_provider', 0.01],
  ['amount_mismatch', 0.01],
  ['duplicate_payment', 0.005],
  ['currency_mismatch', 0.003],
  ['over_refunded', 0.002],
  ['cancelled_but_paid', 0.005],
];
/** Per order, the chance that an ORDERID unknown to the merchant also shows up in the exports. */
const UNKNOWN_ORDER_RATE = 0.005;
const CURRENCIES: ReadonlyArray<readonly [string, number]> = [
  ['EUR', 0.95],
  ['USD', 0.025],
  ['GBP', 0.015],
  ['JPY', 0.01],
];

export const orderIdOf = (n: number) => `ORD-${String(n).padStart(10, '0')}`;
/** The IDENTIFIER of every transaction: one merchant account. */
export const MERCHANT_IDENTIFIER = 'MERCHANT01';
/** The TRANSACTIONID of the n-th transaction (from 1) of the sequence, counted over every scenario in turn. */
export const transactionIdOf = (n: number) => `T${String(n).padStart(12, '0')}`;
/** The service's fee on a transaction: 1.5% of its amount, rounded down, in the same currency. */
export const feesMinorOf = (amountMinor: number) => Math.floor((amountMinor * 15) / 1000);

/** `orders` orders in order-id order, with the unknown ORDERIDs interleaved; the same seed gives the same sequence. */
export function* reconcileScenarios(orders: number, seed = 6): Generator<Scenario> {
  const random = mulberry32(seed);
  for (let n = 0; n < orders; n++) {
    yield orderScenario(n, random);
    if (random() < UNKNOWN_ORDER_RATE) yield unknownScenario(n, random);
  }
}

function pick<T>(choices: ReadonlyArray<readonly [T, number]>, random: () => number): T {
  let r = random();
  for (const [choice, weight] of choices) {
    if (r < weight) return choice;
    r -= weight;
  }
  return choices[0]![0];
}

const between = (low: number, high: number, random: () => number) => low + Math.floor(random() * (high - low + 1));
/** Nothing happens after AS_OF: a step that would have is clamped to just before it. */
const after = (base: number, offset: number) => Math.min(base + offset, AS_OF_MS - 1000);
/** An instant up to `days` before AS_OF, to the second like the exports' DATE. */
const daysBefore = (days: number, random: () => number) => AS_OF_MS - 1000 * Math.floor((random() * days * DAY) / 1000);

function orderScenario(n: number, random: () => number): Scenario {
  const kind = pick(KINDS, random);
  // Approvals and instalment authorizations exist only for the instalment method, which is EUR only.
  const instalmentOnly = kind === 'awaiting_approval';
  const currency = instalmentOnly ? 'EUR' : pick(CURRENCIES, random);
  const method: PaymentMethod = instalmentOnly || (currency === 'EUR' && random() < 0.4) ? 'instalment' : 'wallet';
  const amountMinor =
    method === 'instalment'
      ? between(15_000, 200_000, random)
      : currency === 'JPY'
        ? between(500, 60_000, random)
        : between(500, 50_000, random);
  // Authorizations wait days, not weeks: those orders are recent, so some are still capturable and some are not.
  const ageDays = kind === 'authorized' || kind === 'awaiting_approval' ? 10 : 60;
  const createdMs = daysBefore(ageDays, random);
  const order: BenchOrder = {
    orderId: orderIdOf(n),
    amountMinor,
    currency,
    status: 'paid',
    refundedMinor: 0,
    method,
    createdMs,
  };
  const tx = (
    operation: Operation,
    execCode: string,
    amount: number,
    occurredMs: number,
    txCurrency = currency,
  ): BenchTransaction => ({
    orderId: order.orderId,
    operation,
    execCode,
    amountMinor: amount,
    currency: txCurrency,
    occurredMs,
  });

  // Earlier attempts on the same order: refused ones, and redirections the cardholder never finished.
  const firstOperation: Operation = method === 'instalment' ? 'authorization' : 'payment';
  const attempts = (): BenchTransaction[] => {
    const list: BenchTransaction[] = [];
    if (random() < 0.3)
      list.push(tx(firstOperation, '4001', amountMinor, after(createdMs, between(1, 5, random) * MINUTE)));
    if (random() < 0.15)
      list.push(tx(firstOperation, '0002', amountMinor, after(createdMs, between(1, 5, random) * MINUTE)));
    return list;
  };
  const settle = (amount: number, txCurrency = currency): BenchTransaction[] => {
    const at = after(createdMs, between(6, 30, random) * MINUTE);
    if (method === 'wallet' && random() < 0.6) return [tx('payment', '0000', amount, at, txCurrency)];
    const captureDelay = method === 'instalment' ? between(1, 5, random) * DAY : between(1, 48, random) * HOUR;
    return [
      tx('authorization', '0000', amount, at, txCurrency),
      tx('capture', '0000', amount, after(at, captureDelay), txCurrency),
    ];
  };
  const refund = (amount: number) => tx('refund', '0000', amount, after(createdMs, between(2, 20, random) * DAY));
  const partOf = (amount: number) => Math.max(1, Math.floor((amount * between(10, 90, random)) / 100));

  const transactions: BenchTransaction[] = [];
  switch (kind) {
    case 'settled':
      transactions.push(...attempts(), ...settle(amountMinor));
      break;
    case 'partially_refunded':
      order.status = 'partially_refunded';
      order.refundedMinor = partOf(amountMinor);
      transactions.push(...attempts(), ...settle(amountMinor), refund(order.refundedMinor));
      break;
    case 'refunded':
      order.status = 'refunded';
      order.refundedMinor = amountMinor;
      transactions.push(...attempts(), ...settle(amountMinor), refund(amountMinor));
      break;
    case 'authorized':
      order.status = 'authorized';
      transactions.push(
        ...attempts(),
        tx('authorization', '0000', amountMinor, after(createdMs, between(6, 30, random) * MINUTE)),
      );
      break;
    case 'awaiting_approval':
      order.status = 'authorized';
      transactions.push(tx('authorization', '0003', amountMinor, after(createdMs, between(6, 30, random) * MINUTE)));
      break;
    case 'cancelled_unpaid':
      order.status = 'cancelled';
      break;
    case 'cancelled_refused':
      order.status = 'cancelled';
      transactions.push(tx(firstOperation, '4001', amountMinor, after(createdMs, between(1, 5, random) * MINUTE)));
      break;
    case 'abandoned':
      transactions.push(tx(firstOperation, '0002', amountMinor, after(createdMs, between(1, 5, random) * MINUTE)));
      break;
    case 'missing_at_provider':
      break;
    case 'amount_mismatch': {
      const delta = between(1, 500, random) * (random() < 0.5 ? -1 : 1);
      transactions.push(...settle(Math.max(1, amountMinor + delta)));
      break;
    }
    case 'duplicate_payment':
      transactions.push(...settle(amountMinor), ...settle(amountMinor));
      break;
    case 'currency_mismatch':
      transactions.push(...settle(amountMinor, currency === 'EUR' ? 'USD' : 'EUR'));
      break;
    case 'over_refunded':
      order.status = 'partially_refunded';
      order.refundedMinor = partOf(amountMinor);
      transactions.push(...settle(amountMinor), refund(order.refundedMinor), refund(amountMinor));
      break;
    case 'cancelled_but_paid':
      order.status = 'cancelled';
      transactions.push(...settle(amountMinor));
      break;
  }
  return { kind, order, transactions };
}

/** Transactions under an ORDERID the merchant has no order for: mostly money taken, some only refused. */
function unknownScenario(n: number, random: () => number): Scenario {
  const orderId = `UNKNOWN-${String(n).padStart(10, '0')}`;
  const occurredMs = daysBefore(60, random);
  const amountMinor = between(500, 50_000, random);
  const refused = random() < 0.2;
  const transaction = { orderId, operation: 'payment' as const, amountMinor, currency: 'EUR', occurredMs };
  return refused
    ? { kind: 'unknown_order_refused', order: null, transactions: [{ ...transaction, execCode: '4001' }] }
    : { kind: 'unknown_order', order: null, transactions: [{ ...transaction, execCode: '0000' }] };
}
