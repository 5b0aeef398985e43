import type { RunScope, VerdictStatus } from './verdict-vocabulary.ts';
import type { SandboxStore, SandboxTransaction } from '../store.ts';
import { expectedVerdict, exportedDate, type MerchantOrder, type VerdictSettings } from './expected-verdict.ts';
import { judgedInScope } from './judged-in-scope.ts';
import type { ScenarioOutcome, ScenarioSummary } from './seed-scenario.ts';

/** One order of the scenario: what the merchant's csv says of it, and the verdict a reconciliation should give it. */
export interface ScenarioOrder {
  readonly orderId: string;
  readonly outcome: ScenarioOutcome;
  /** The row of the orders csv; undefined when the order is left out of it on purpose. */
  readonly order: MerchantOrder | undefined;
  /** How the row departs on purpose from what the service recorded; undefined for an order booked truly. */
  readonly discrepancy: Discrepancy | undefined;
  /**
   * What a run of the options' scope (all unless told) gives the ORDERID at `asOf`; null for no verdict at all: outside
   * the scope, or an ORDERID without order nor succeeded transaction.
   */
  readonly expected: VerdictStatus | null;
}

export interface ScenarioOrdersOptions {
  /** Grace period and tolerance of the run; recon's defaults unless told. */
  readonly settings?: VerdictSettings;
  /**
   * The run's scope, as `reconcile` takes it; `{ kind: 'all' }` unless told. The order left out of the csv is
   * `unknown_order` in a scope that holds its ORDERID (all, or a list naming it, as a run that also asks about the
   * ORDERIDs of its notifications does), and has no verdict in any other.
   */
  readonly scope?: RunScope;
}

/**
 * How the csv departs on purpose from what the service recorded, one order each, and the verdict each makes: five
 * mistakes, and an order booked before its money.
 * - `left-out` (unknown_order): an order with money moved is missing from the merchant's books.
 * - `other-currency` (currency_mismatch): the books say USD where the service charged EUR (or EUR for USD).
 * - `cancelled-but-captured` (status_mismatch): the shop cancelled an order whose money was captured.
 * - `partial-capture-not-booked` (amount_mismatch): a partial capture, the order still at the authorized amount.
 * - `paid-but-failed` (missing_at_provider, or pending while in grace): the shop marked paid an order whose payment
 *   was refused or abandoned at the redirect; the oldest such order, so it is out of the grace period if any is.
 * - `booked-before-paid` (pending, missing_at_provider once past the grace period): no mistake yet, the shop booked
 *   as paid (or authorized) the order whose shopper is on the payment page now, the youngest still awaiting the
 *   cardholder (the seeder places one minutes before its clock's reading): money still awaited.
 */
export type Discrepancy =
  | 'left-out'
  | 'other-currency'
  | 'cancelled-but-captured'
  | 'partial-capture-not-booked'
  | 'paid-but-failed'
  | 'booked-before-paid';

export const DEFAULT_VERDICT_SETTINGS: VerdictSettings = { graceHours: 24, toleranceMinor: 0n };

interface DiscrepancyPlan {
  readonly discrepancy: Discrepancy;
  /** The outcomes whose orders may carry it, preferred first; every scenario has an order of each outcome. */
  readonly from: readonly ScenarioOutcome[];
  /** Which of the outcomes' orders it takes first, by creation; by default the first created in the scenario's list. */
  readonly prefer?: 'oldest' | 'youngest';
  /** The row as the merchant wrongly keeps it; undefined: not kept at all. */
  alter(truth: MerchantOrder, transactions: readonly SandboxTransaction[]): MerchantOrder | undefined;
}

/**
 * In this order, each taking the first order not taken yet: every plan's first outcome differs from the others', so
 * each finds an order in any scenario.
 */
const PLANS: readonly DiscrepancyPlan[] = [
  {
    discrepancy: 'partial-capture-not-booked',
    from: ['captured-partial'],
    alter: (truth, transactions) => ({ ...truth, amount: authorizedAmount(transactions) ?? truth.amount + 100n }),
  },
  {
    discrepancy: 'cancelled-but-captured',
    from: ['captured-full', 'captured-partial'],
    alter: (truth) => ({ ...truth, status: 'cancelled', refunded: 0n }),
  },
  // Money still held, so that the bridge shows what the books lack.
  { discrepancy: 'left-out', from: ['captured-full', 'refunded-several', 'refunded-full'], alter: () => undefined },
  {
    discrepancy: 'other-currency',
    from: ['refunded-partial', 'refunded-several', 'captured-full'],
    alter: (truth) => ({ ...truth, currency: truth.currency === 'USD' ? 'EUR' : 'USD' }),
  },
  {
    discrepancy: 'paid-but-failed',
    from: ['refused', 'pending-refused', 'awaiting-cardholder'],
    prefer: 'oldest',
    alter: (truth) => ({ ...truth, status: 'paid', refunded: 0n }),
  },
  {
    discrepancy: 'booked-before-paid',
    from: ['awaiting-cardholder'],
    prefer: 'youngest',
    alter: (truth, transactions) => ({
      ...truth,
      status: transactions[0]?.operationType === 'payment' ? 'paid' : 'authorized',
      refunded: 0n,
    }),
  },
];

/**
 * The merchant's orders of a seeded scenario as the store holds it now, each with the verdict a reconciliation at
 * `asOf` should give it, for tests that import the orders, ingest an export of the same store and compare.
 *
 * Each order is first booked as the service recorded it (bookedOrder), then a few depart from it on purpose (PLANS),
 * one of each kind. The others are plain: most come out `matched`, and those the service's own state makes
 * exceptions come out as such without any mistake: `duplicate_payment` (paid-twice), `approval_expired`
 * (pending-expired), `capture_expired` (capture-window-passed), `capture_at_risk` (capture-window-closing) and
 * `pending` (an approval still awaited, or an order younger than the grace period whose money is not in yet). The
 * seeder dates an order validated hours before its clock's reading, and the shopper of `booked-before-paid` on the
 * payment page minutes before it: at that instant, every scenario holds a young order whose money is in (`matched`)
 * and one whose money is awaited (`pending`).
 *
 * The csv does not depend on `asOf`: the age-based verdicts (pending, capture_at_risk, capture_expired,
 * approval_expired) are decided by expectedVerdict from the sandbox clock's dates of the transactions, which the
 * seeder placed relative to the clock's reading when it seeded (a closing capture window 5 to 7 days before it, an
 * expired approval more than 6 days before it...). With `asOf` the sandbox clock's reading at seeding, every kind
 * above comes out; a later `asOf` ages them as recon would (a capture at risk becomes expired 2 days on).
 *
 * Never produced: over_refunded (the service refuses a refund beyond what is left to refund, so its records never
 * show one) and notification_conflict (the sandbox notifies what it records: a notification never contradicts an
 * export). Only the scenario's orders: ORDERIDs created later through the process endpoint are not listed. The
 * expectations assume an export holding every transaction of the store: with an export lag, the youngest are not.
 */
export function scenarioOrders(
  store: SandboxStore,
  scenario: ScenarioSummary,
  asOf: Date,
  { settings = DEFAULT_VERDICT_SETTINGS, scope = { kind: 'all' } }: ScenarioOrdersOptions = {},
): ScenarioOrder[] {
  const outcomeOf = new Map<string, ScenarioOutcome>();
  for (const [outcome, orderIds] of Object.entries(scenario.ordersByOutcome)) {
    for (const orderId of orderIds) outcomeOf.set(orderId, outcome as ScenarioOutcome);
  }
  const discrepancyOf = chooseDiscrepancies(store, scenario);
  return scenario.orderIds.map((orderId) => {
    const transactions = store.byOrderId(orderId);
    const truth = bookedOrder(orderId, transactions);
    const plan = discrepancyOf.get(orderId);
    const order = plan ? plan.alter(truth, transactions) : truth;
    return {
      orderId,
      outcome: outcomeOf.get(orderId)!,
      order,
      discrepancy: plan?.discrepancy,
      expected: judgedInScope(scope, orderId, order) ? expectedVerdict(order, transactions, asOf, settings) : null,
    };
  });
}

function chooseDiscrepancies(store: SandboxStore, scenario: ScenarioSummary): Map<string, DiscrepancyPlan> {
  const chosen = new Map<string, DiscrepancyPlan>();
  const firstCreated = (orderId: string) => store.byOrderId(orderId)[0]?.createdAt.getTime() ?? Infinity;
  for (const plan of PLANS) {
    const candidates = plan.from
      .flatMap((outcome) => scenario.ordersByOutcome[outcome])
      .filter((id) => !chosen.has(id));
    if (plan.prefer === 'oldest') candidates.sort((a, b) => firstCreated(a) - firstCreated(b));
    if (plan.prefer === 'youngest') candidates.sort((a, b) => firstCreated(b) - firstCreated(a));
    const orderId = candidates[0];
    if (orderId !== undefined) chosen.set(orderId, plan);
  }
  return chosen;
}

/**
 * The order as a merchant books it from what the service did: paid for the first succeeded payment or capture (the
 * amount charged once), refunded or partially refunded after refunds; authorized while an authorization holds or
 * awaits approval; cancelled when the payment was refused or abandoned. Created when its first transaction was, to
 * the second (the export's DATE), in the first transaction's method and currency.
 */
export function bookedOrder(orderId: string, transactions: readonly SandboxTransaction[]): MerchantOrder {
  const first = transactions[0];
  if (!first) throw new RangeError(`order ${orderId} has no transaction in the sandbox`);
  const succeeded = transactions.filter((transaction) => transaction.execCode === '0000');
  const charge = succeeded.find(
    (transaction) => transaction.operationType === 'payment' || transaction.operationType === 'capture',
  );
  const base = {
    orderId,
    currency: first.currency,
    paymentMethod: first.method,
    createdAt: new Date(exportedDate(first)),
    refunded: 0n,
  };
  if (charge) {
    const refundTotal = succeeded
      .filter((transaction) => transaction.operationType === 'refund')
      .reduce((sum, refund) => sum + refund.amount, 0n);
    const refunded = refundTotal < charge.amount ? refundTotal : charge.amount;
    const status = refunded === 0n ? 'paid' : refunded === charge.amount ? 'refunded' : 'partially_refunded';
    return { ...base, amount: charge.amount, status, refunded };
  }
  const holding = transactions.find(
    (transaction) =>
      transaction.operationType === 'authorization' &&
      (transaction.execCode === '0000' || transaction.execCode === '0003'),
  );
  if (holding) return { ...base, amount: holding.amount, status: 'authorized' };
  return { ...base, amount: first.amount, status: 'cancelled' };
}

function authorizedAmount(transactions: readonly SandboxTransaction[]): bigint | undefined {
  return transactions.find((transaction) => transaction.operationType === 'authorization')?.amount;
}
