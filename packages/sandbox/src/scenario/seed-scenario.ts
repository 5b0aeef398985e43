import { signParams, type Params } from '@recon/protocol';
import type { SandboxClock } from '../clock.ts';
import { DEFAULT_CURRENCY, INSTALMENT_MAX_CENTS, INSTALMENT_MIN_CENTS } from '../process/start-redirect.ts';
import { createSandboxAccounts, type SandboxAccount, type SandboxAccounts } from '../sandbox-accounts.ts';
import type { PaymentMethod, SandboxStore, SandboxTransaction } from '../store.ts';
import { expireOverdueApprovals } from '../time-rules.ts';
import {
  awaitingCardholderRecord,
  firstInstalment,
  followUpRecord,
  PENDING_APPROVAL,
  REFUSED,
  succeededStart,
} from '../transaction-records.ts';
import { drawCustomer } from './scenario-customer.ts';
import type { ScenarioCustomer } from './scenario-customer.ts';
import { createSeededRandom } from './seeded-random.ts';
import type { SeededRandom } from './seeded-random.ts';

/** What an order of the scenario ends as; every one occurs at least once. */
export const SCENARIO_OUTCOMES = [
  'awaiting-cardholder',
  'validated',
  'refused',
  'pending',
  'pending-validated',
  'pending-refused',
  'pending-expired',
  'captured-full',
  'captured-partial',
  'capture-window-closing',
  'capture-window-passed',
  'refunded-full',
  'refunded-partial',
  'refunded-several',
  'paid-twice',
] as const;
export type ScenarioOutcome = (typeof SCENARIO_OUTCOMES)[number];

export interface ScenarioTarget {
  readonly store: SandboxStore;
  readonly clock: SandboxClock;
  /**
   * Where orders are paid: each order on the first account enabled for its method (an instalment account and a
   * wallet account split the scenario between them). Each account's secret signs the requests recorded on it, so
   * each reads as the request the service received. Or a single account given as `identifier` and `secret`.
   */
  readonly accounts?: readonly SandboxAccount[] | SandboxAccounts;
  readonly identifier?: string;
  readonly secret?: string;
  /**
   * Told of each operation the service notifies, as it ends: the cardholder's step and the later answer to a pending
   * approval (0000, 0003 or a refusal), every capture and every refund, never a 0002 nor an expiry (the sandbox
   * passes them to its outbox, as it does its live operations).
   */
  readonly notify: (transaction: SandboxTransaction) => void;
}

export interface ScenarioOptions {
  readonly seed: number;
  /** Number of orders; at least one per outcome. Default 40. */
  readonly orders?: number;
}

export interface ScenarioSummary {
  readonly seed: number;
  /** Every order created, in order of creation. */
  readonly orderIds: readonly string[];
  readonly ordersByOutcome: Readonly<Record<ScenarioOutcome, readonly string[]>>;
  readonly counts: Readonly<Record<ScenarioOutcome, number>>;
  readonly transactionCount: number;
}

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;
/** The scenario's history spans the last 14 days of the sandbox clock: beyond both the 6- and 7-day rules. */
const HISTORY_MS = 14 * DAY;
const WALLET_MIN_CENTS = 500n;
const WALLET_MAX_CENTS = 150_000n;
const INSTALMENT_OPTIONS = ['instalpay-3x', 'instalpay-3xsansfrais', 'instalpay-4x', 'instalpay-4xsansfrais'];
const REFUSALS: readonly Partial<SandboxTransaction>[] = [
  REFUSED,
  REFUSED,
  { ...REFUSED, execCode: '4002', message: 'Insufficient funds' },
  { ...REFUSED, execCode: '4003', message: 'Card refused by the issuer' },
];
/**
 * Outcomes a merchant must act on (an approval that expired, a capture window closing or closed, a shopper who paid
 * twice): one order each, so that most orders of a scenario are plain.
 */
const RARE_OUTCOMES: ReadonlySet<ScenarioOutcome> = new Set([
  'pending-expired',
  'capture-window-closing',
  'capture-window-passed',
  'paid-twice',
]);
/**
 * How long ago the last step of the first order of these outcomes lies, [youngest, oldest] in ms: every scenario then
 * holds a young order whose money is in (validated hours ago) and one whose money is awaited (a shopper on the
 * payment page now), whatever the draw places the others.
 */
const JUST_NOW: Partial<Readonly<Record<ScenarioOutcome, readonly [number, number]>>> = {
  validated: [10 * MINUTE, 12 * HOUR],
  'awaiting-cardholder': [2 * MINUTE, 30 * MINUTE],
};
/** Outcomes drawn beyond the first of each, weighted like a shop's everyday mix. */
const EVERYDAY_OUTCOMES: readonly ScenarioOutcome[] = [
  ...SCENARIO_OUTCOMES.filter((outcome) => !RARE_OUTCOMES.has(outcome)),
  'validated',
  'validated',
  'captured-full',
  'captured-full',
  'captured-full',
  'refused',
  'refunded-partial',
];

/**
 * Creates a realistic population of orders of both payment methods directly in the store, ending in every
 * outcome the interface shows, dated over the last 14 days of the sandbox clock (which it does not move).
 * The same seed on a fresh store and the same clock reading gives an identical store. Transactions are added
 * in the order they happened, so their ids grow with time as the service's do, and `notify` hears of each
 * operation the service notifies in that order too.
 */
export function seedScenario(target: ScenarioTarget, options: ScenarioOptions): ScenarioSummary {
  const orderCount = options.orders ?? 40;
  if (!Number.isInteger(orderCount) || orderCount < SCENARIO_OUTCOMES.length) {
    const least = SCENARIO_OUTCOMES.length;
    throw new RangeError(`a scenario has at least ${least} orders, one per outcome (got ${orderCount})`);
  }
  const accounts = scenarioAccounts(target);
  const random = createSeededRandom(options.seed);
  const now = target.clock.now();
  const outcomes = shuffle(random, [
    ...SCENARIO_OUTCOMES,
    ...Array.from({ length: orderCount - SCENARIO_OUTCOMES.length }, () => random.pick(EVERYDAY_OUTCOMES)),
  ]);

  const events: PlannedEvent[] = [];
  const ordersByOutcome = Object.fromEntries(SCENARIO_OUTCOMES.map((outcome) => [outcome, [] as string[]]));
  const orderIds = outcomes.map((outcome, index) => {
    const orderId = `ORD-${options.seed}-${String(index + 1).padStart(4, '0')}`;
    const justNow = ordersByOutcome[outcome]!.length === 0 ? JUST_NOW[outcome] : undefined;
    ordersByOutcome[outcome]!.push(orderId);
    events.push(...planOrder({ ...target, accounts }, random, now, { orderId, outcome, index, justNow }));
    return orderId;
  });

  const before = target.store.all().length;
  // A stable sort: steps of one order at the same instant keep their planned sequence.
  events.sort((a, b) => a.at - b.at);
  for (const event of events) event.apply();
  expireOverdueApprovals(target.store, now);

  return {
    seed: options.seed,
    orderIds,
    ordersByOutcome: ordersByOutcome as Record<ScenarioOutcome, string[]>,
    counts: Object.fromEntries(
      SCENARIO_OUTCOMES.map((outcome) => [outcome, ordersByOutcome[outcome]!.length]),
    ) as Record<ScenarioOutcome, number>,
    transactionCount: target.store.all().length - before,
  };
}

/** The target once its accounts are known: every order finds an account for its method. */
interface SeedingTarget extends ScenarioTarget {
  readonly accounts: SandboxAccounts;
}

function scenarioAccounts(target: ScenarioTarget): SandboxAccounts {
  const { accounts, identifier, secret } = target;
  if (accounts !== undefined && (identifier !== undefined || secret !== undefined)) {
    throw new TypeError('a scenario target names its accounts, or one account by identifier and secret: not both');
  }
  if (accounts === undefined && (identifier === undefined || secret === undefined)) {
    throw new TypeError('a scenario target needs its accounts, or identifier and secret');
  }
  const resolved =
    accounts === undefined
      ? createSandboxAccounts([{ identifier: identifier!, secret: secret! }])
      : 'list' in accounts
        ? accounts
        : createSandboxAccounts(accounts);
  for (const method of ['instalment', 'wallet'] as const) {
    if (!resolved.forMethod(method))
      throw new RangeError(`the scenario pays with both methods: no account serves ${method}`);
  }
  return resolved;
}

interface PlannedEvent {
  /** Epoch milliseconds. */
  readonly at: number;
  readonly apply: () => void;
}

interface OrderToPlan {
  readonly orderId: string;
  readonly outcome: ScenarioOutcome;
  readonly index: number;
  /** Where its last step lies instead of where its outcome usually puts it (JUST_NOW). */
  readonly justNow: readonly [number, number] | undefined;
}

/**
 * One order's history: the payment or authorization (0002), the cardholder's step, perhaps a wait for approval,
 * then captures and refunds. Gaps are drawn first, then the start is placed so the last step lands where the
 * outcome needs it (a pending approval still within 6 days, an expired one beyond, and so on).
 */
function planOrder(target: SeedingTarget, random: SeededRandom, now: Date, order: OrderToPlan): PlannedEvent[] {
  const { outcome } = order;
  const viaPending = outcome.startsWith('pending') || (isCapturedOrRefunded(outcome) && random.chance(0.25));
  const method: PaymentMethod =
    outcome !== 'paid-twice' && (viaPending || random.chance(0.45)) ? 'instalment' : 'wallet';
  const operationType = chooseOperation(random, method, outcome);
  const amount =
    method === 'instalment'
      ? random.bigint(INSTALMENT_MIN_CENTS, INSTALMENT_MAX_CENTS)
      : random.bigint(WALLET_MIN_CENTS, WALLET_MAX_CENTS);
  const start: OrderStart = {
    orderId: order.orderId,
    method,
    operationType,
    amount,
    customer: drawCustomer(random, order.index + 1),
    paymentOption: method === 'instalment' ? random.pick(INSTALMENT_OPTIONS) : undefined,
  };

  // The steps after the first, as (gap, action) pairs.
  const steps: { gap: number; apply: (at: Date) => void }[] = [];
  let origin: SandboxTransaction | undefined;
  const store = target.store;
  const settle = (patchFor: (start: SandboxTransaction) => Partial<SandboxTransaction>) => (at: Date) => {
    origin = store.update(origin!.transactionId, { ...patchFor(origin!), updatedAt: at });
    target.notify(origin);
  };

  if (outcome !== 'awaiting-cardholder') {
    const cardholderGap = random.int(2 * MINUTE, 30 * MINUTE);
    if (viaPending) {
      steps.push({ gap: cardholderGap, apply: settle(() => PENDING_APPROVAL) });
      if (outcome !== 'pending' && outcome !== 'pending-expired') {
        const update = outcome === 'pending-refused' ? refusal(random) : succeededStart;
        steps.push({ gap: random.int(2 * HOUR, 3 * DAY), apply: settle(update) });
      }
    } else {
      const result = outcome === 'refused' ? refusal(random) : succeededStart;
      steps.push({ gap: cardholderGap, apply: settle(result) });
    }
  }

  if (outcome === 'paid-twice') {
    // The shopper, the first payment seemingly stuck, paid again: a second payment of the same order, same request.
    let again: SandboxTransaction | undefined;
    steps.push({
      gap: random.int(MINUTE, 10 * MINUTE),
      apply: (at) => {
        again = addStart(target, start, at);
      },
    });
    steps.push({
      gap: random.int(2 * MINUTE, 30 * MINUTE),
      apply: (at) => {
        target.notify(store.update(again!.transactionId, { ...succeededStart(again!), updatedAt: at }));
      },
    });
  }

  let refundable: { amount: bigint; transaction: () => SandboxTransaction } | undefined;
  if (operationType === 'payment') refundable = { amount, transaction: () => store.get(origin!.transactionId)! };
  if (isCapturedOrRefunded(outcome) && operationType === 'authorization') {
    const partial = outcome === 'captured-partial' || (outcome.startsWith('refunded') && random.chance(0.3));
    const captured = partial ? (amount * BigInt(random.int(30, 95))) / 100n : amount;
    let capture: SandboxTransaction | undefined;
    steps.push({
      gap: random.int(HOUR, 4 * DAY),
      apply: (at) => {
        capture = addCapture(target, origin!, captured, partial, at);
        origin = store.get(origin!.transactionId);
      },
    });
    refundable = { amount: captured, transaction: () => store.get(capture!.transactionId)! };
  }
  if (outcome.startsWith('refunded') && refundable) {
    for (const refundAmount of refundAmounts(random, outcome, refundable.amount)) {
      const parent = refundable.transaction;
      steps.push({ gap: random.int(HOUR, DAY), apply: (at) => addRefund(target, parent(), refundAmount, at) });
    }
  }

  const spent = steps.reduce((total, step) => total + step.gap, 0);
  const [youngest, oldest] = order.justNow ?? lastStepAge(outcome, HISTORY_MS - spent);
  const startedAt = now.getTime() - random.int(youngest, oldest) - spent;
  const events: PlannedEvent[] = [
    {
      at: startedAt,
      apply: () => {
        origin = addStart(target, start, new Date(startedAt));
      },
    },
  ];
  let at = startedAt;
  for (const step of steps) {
    at += step.gap;
    const when = new Date(at);
    events.push({ at, apply: () => step.apply(when) });
  }
  return events;
}

function isCapturedOrRefunded(outcome: ScenarioOutcome): boolean {
  return outcome.startsWith('captured') || outcome.startsWith('refunded');
}

/** The instalment method authorizes only; the wallet pays at once or authorizes then captures. */
function chooseOperation(random: SeededRandom, method: PaymentMethod, outcome: ScenarioOutcome): StartOperation {
  if (method === 'instalment') return 'authorization';
  if (outcome.startsWith('captured') || outcome.startsWith('capture-window')) return 'authorization';
  if (outcome === 'paid-twice') return 'payment';
  return random.chance(0.6) ? 'payment' : 'authorization';
}

/** How long ago the order's last step may lie, [youngest, oldest] in ms, for its outcome to hold today. */
function lastStepAge(outcome: ScenarioOutcome, room: number): [number, number] {
  switch (outcome) {
    case 'pending':
      return [10 * MINUTE, 6 * DAY - HOUR];
    case 'validated':
      // well within its capture window: neither closing (5 days, when a reconciliation warns) nor passed
      return [10 * MINUTE, 5 * DAY - HOUR];
    case 'capture-window-closing':
      return [5 * DAY + HOUR, 7 * DAY - HOUR];
    case 'pending-expired':
      return [6 * DAY + HOUR, room];
    case 'capture-window-passed':
      return [7 * DAY + HOUR, room];
    default:
      return [10 * MINUTE, Math.max(room, 10 * MINUTE)];
  }
}

function refundAmounts(random: SeededRandom, outcome: ScenarioOutcome, refundable: bigint): bigint[] {
  if (outcome === 'refunded-full') return [refundable];
  if (outcome === 'refunded-partial') return [(refundable * BigInt(random.int(10, 90))) / 100n || 1n];
  // several: two or three refunds, the last sometimes emptying the resting amount
  const amounts: bigint[] = [];
  let resting = refundable;
  const count = random.int(2, 3);
  for (let i = 0; i < count && resting > 0n; i++) {
    const last = i === count - 1;
    const amount = last && random.chance(0.5) ? resting : (resting * BigInt(random.int(15, 45))) / 100n || 1n;
    amounts.push(amount);
    resting -= amount;
  }
  return amounts;
}

/** One of the refusals, drawn now so that the draw order of the seed does not depend on when it is applied. */
function refusal(random: SeededRandom): () => Partial<SandboxTransaction> {
  const drawn = random.pick(REFUSALS);
  return () => drawn;
}

/** The payment or authorization an order begins with. */
interface OrderStart {
  readonly orderId: string;
  readonly method: PaymentMethod;
  readonly operationType: StartOperation;
  readonly amount: bigint;
  readonly customer: ScenarioCustomer;
  readonly paymentOption: string | undefined;
}

type StartOperation = 'payment' | 'authorization';

/** The order's first request as the merchant would have sent it: the method's usual fields, signed. */
function startRequest(target: SeedingTarget, start: OrderStart): Params {
  const { customer } = start;
  const account = accountOf(target, start.method);
  const common = {
    IDENTIFIER: account.identifier,
    OPERATIONTYPE: start.operationType,
    ORDERID: start.orderId,
    AMOUNT: String(start.amount),
    CLIENTIDENT: customer.ident,
    CLIENTEMAIL: customer.email,
    CLIENTUSERAGENT: customer.userAgent,
    CLIENTIP: customer.ip,
    DESCRIPTION: `Order ${start.orderId}`,
    VERSION: '3.0',
  };
  const specific = start.paymentOption
    ? {
        PAYMENTOPTION: start.paymentOption,
        BILLINGFIRSTNAME: customer.firstName,
        BILLINGLASTNAME: customer.lastName,
        BILLINGADDRESS: customer.street,
        BILLINGPOSTALCODE: customer.postalCode,
        BILLINGCITY: customer.city,
        BILLINGCOUNTRY: customer.country,
      }
    : {
        CARDFULLNAME: `${customer.firstName} ${customer.lastName}`,
        CLIENTADDRESS: `${customer.street}, ${customer.postalCode} ${customer.city}`,
        BILLINGCOUNTRY: customer.country,
      };
  return signParams(account.secret, { ...common, ...specific });
}

function addStart(target: SeedingTarget, start: OrderStart, at: Date): SandboxTransaction {
  const record = awaitingCardholderRecord(
    target.store,
    {
      orderId: start.orderId,
      identifier: accountOf(target, start.method).identifier,
      method: start.method,
      operationType: start.operationType,
      amount: start.amount,
      currency: DEFAULT_CURRENCY,
      paymentOption: start.paymentOption,
      request: startRequest(target, start),
    },
    at,
  );
  return target.store.add(record);
}

function addCapture(
  target: SeedingTarget,
  authorization: SandboxTransaction,
  amount: bigint,
  partial: boolean,
  at: Date,
): SandboxTransaction {
  target.store.update(authorization.transactionId, { capturedAmount: amount });
  const request = followUpRequest(
    target,
    'capture',
    authorization,
    `Shipment of order ${authorization.orderId}`,
    partial ? amount : undefined,
  );
  const capture = target.store.add({
    ...followUpRecord(target.store, authorization, 'capture', amount, request, at),
    restingAmount: amount,
    ...(authorization.paymentOption ? { schedule: firstInstalment(authorization.paymentOption) } : {}),
  });
  target.notify(capture);
  return capture;
}

function addRefund(target: SeedingTarget, refunded: SandboxTransaction, amount: bigint, at: Date): SandboxTransaction {
  target.store.update(refunded.transactionId, { restingAmount: (refunded.restingAmount ?? 0n) - amount });
  const request = followUpRequest(target, 'refund', refunded, `Refund on order ${refunded.orderId}`, amount);
  const refund = target.store.add(followUpRecord(target.store, refunded, 'refund', amount, request, at));
  target.notify(refund);
  return refund;
}

/** The signed request of a capture or refund acting on `acted`; AMOUNT only when not the whole amount. */
function followUpRequest(
  scenario: SeedingTarget,
  operation: 'capture' | 'refund',
  acted: SandboxTransaction,
  description: string,
  amount: bigint | undefined,
): Params {
  const account = scenario.accounts.find(acted.identifier)!;
  return signParams(account.secret, {
    IDENTIFIER: account.identifier,
    OPERATIONTYPE: operation,
    TRANSACTIONID: acted.transactionId,
    ORDERID: acted.orderId,
    DESCRIPTION: description,
    VERSION: '3.0',
    ...(amount === undefined ? {} : { AMOUNT: String(amount) }),
  });
}

function accountOf(target: SeedingTarget, method: PaymentMethod): SandboxAccount {
  return target.accounts.forMethod(method)!;
}

function shuffle<T>(random: SeededRandom, items: T[]): T[] {
  for (let i = items.length - 1; i > 0; i--) {
    const j = random.int(0, i);
    [items[i], items[j]] = [items[j]!, items[i]!];
  }
  return items;
}
