import type { OrderStatus, PaymentMethod, VerdictStatus } from './verdict-vocabulary.ts';
import type { SandboxTransaction } from '../store.ts';

/** An order as the merchant's books hold it, money in minor units. */
export interface MerchantOrder {
  readonly orderId: string;
  readonly amount: bigint;
  readonly currency: string;
  readonly status: OrderStatus;
  readonly refunded: bigint;
  readonly paymentMethod: PaymentMethod;
  readonly createdAt: Date;
}

/** The reconciliation's settings the verdict depends on (recon's defaults: 24 hours, 0). */
export interface VerdictSettings {
  readonly graceHours: number;
  readonly toleranceMinor: bigint;
}

const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;

/**
 * The verdict `recon reconcile` gives an ORDERID its run judges (judgedInScope says which), as of `asOf`, when its
 * orders hold `order` (undefined: the ORDERID is not among them, unknown_order once it has a succeeded transaction)
 * and its ingested export holds `transactions`: the rules of src/reconcile/verdicts-sql.ts written again over the
 * sandbox's records, the first that holds giving the status. Null when the reconciliation gives it no verdict at all
 * (an ORDERID without order nor succeeded transaction).
 *
 * The ages are measured as recon measures them: from what the export shows, the DATE of each transaction, which is
 * when it was created (to the second), never when the sandbox last changed it. notification_conflict needs a
 * notification that contradicts the export, and the sandbox notifies what it records: it never comes out.
 */
export function expectedVerdict(
  order: MerchantOrder | undefined,
  transactions: readonly SandboxTransaction[],
  asOf: Date,
  settings: VerdictSettings,
): VerdictStatus | null {
  const facts = transactionFacts(transactions);
  if (!order) return facts.succeededCount > 0 ? 'unknown_order' : null;

  const before = (ms: number) => asOf.getTime() - ms;
  const atOrBefore = (at: number | undefined, ms: number) => at !== undefined && at <= before(ms);
  const { status } = order;
  const expected =
    status === 'paid' ? order.amount : status === 'partially_refunded' ? order.amount - order.refunded : 0n;
  const settled = facts.paid - facts.refunded;
  const expectsPayment = status === 'paid' || status === 'partially_refunded' || status === 'refunded';
  const awaitsItsMoney =
    (expectsPayment && facts.paymentCount === 0) || (status === 'authorized' && facts.authorizationCount === 0);
  const inGrace = order.createdAt.getTime() > before(settings.graceHours * HOUR_MS);
  const approvalWaitOver = atOrBefore(facts.latestApprovalWaitAt, 6 * DAY_MS);
  const approvalWaiting = facts.latestApprovalWaitAt !== undefined && !approvalWaitOver;
  const captureWindowClosed = atOrBefore(facts.firstAuthorizedAt, 7 * DAY_MS);
  const captureWindowClosing = atOrBefore(facts.firstAuthorizedAt, 5 * DAY_MS);
  const uncapturedAuthorization = status === 'authorized' && facts.captureCount === 0;
  const difference = settled - expected;

  if (facts.currencies.some((currency) => currency !== order.currency)) return 'currency_mismatch';
  if (facts.paymentCount > 1) return 'duplicate_payment';
  if (facts.refunded > facts.paid) return 'over_refunded';
  if (
    (status === 'cancelled' && settled > 0n) ||
    (status === 'authorized' && facts.paid > 0n) ||
    (expectsPayment && facts.paid === 0n && facts.authorized > 0n)
  )
    return 'status_mismatch';
  if (
    (expectsPayment && facts.paid > 0n && (difference < 0n ? -difference : difference) > settings.toleranceMinor) ||
    (status === 'authorized' && facts.authorized > 0n && facts.authorized !== order.amount)
  )
    return 'amount_mismatch';
  if (order.paymentMethod === 'instalment' && approvalWaitOver && facts.succeededCount === 0) return 'approval_expired';
  if (uncapturedAuthorization && captureWindowClosed) return 'capture_expired';
  if (uncapturedAuthorization && captureWindowClosing) return 'capture_at_risk';
  if ((awaitsItsMoney && inGrace) || (approvalWaiting && facts.succeededCount === 0)) return 'pending';
  if (awaitsItsMoney) return 'missing_at_provider';
  return 'matched';
}

interface TransactionFacts {
  readonly succeededCount: number;
  readonly paid: bigint;
  readonly refunded: bigint;
  readonly authorized: bigint;
  /** Succeeded payments and captures. */
  readonly paymentCount: number;
  readonly captureCount: number;
  readonly authorizationCount: number;
  /** Epoch ms of the export's DATE. */
  readonly firstAuthorizedAt: number | undefined;
  readonly latestApprovalWaitAt: number | undefined;
  /** Of the succeeded transactions. */
  readonly currencies: readonly string[];
}

/** What recon's order facts (src/reconcile/order-facts-sql.ts) sum from an ORDERID's exported transactions. */
function transactionFacts(transactions: readonly SandboxTransaction[]): TransactionFacts {
  let succeededCount = 0;
  let paid = 0n;
  let refunded = 0n;
  let authorized = 0n;
  let paymentCount = 0;
  let captureCount = 0;
  let authorizationCount = 0;
  let firstAuthorizedAt: number | undefined;
  let latestApprovalWaitAt: number | undefined;
  const currencies = new Set<string>();
  for (const transaction of transactions) {
    const exportedAt = exportedDate(transaction);
    const type = transaction.operationType;
    if (type === 'authorization' && transaction.execCode === '0003') {
      latestApprovalWaitAt = Math.max(latestApprovalWaitAt ?? exportedAt, exportedAt);
    }
    if (transaction.execCode !== '0000') continue;
    succeededCount += 1;
    currencies.add(transaction.currency);
    if (type === 'payment' || type === 'capture') {
      paid += transaction.amount;
      paymentCount += 1;
      if (type === 'capture') captureCount += 1;
    } else if (type === 'refund') {
      refunded += transaction.amount;
    } else {
      authorized += transaction.amount;
      authorizationCount += 1;
      firstAuthorizedAt = Math.min(firstAuthorizedAt ?? exportedAt, exportedAt);
    }
  }
  return {
    succeededCount,
    paid,
    refunded,
    authorized,
    paymentCount,
    captureCount,
    authorizationCount,
    firstAuthorizedAt,
    latestApprovalWaitAt,
    currencies: [...currencies],
  };
}

/** The export writes DATE to the second: the instant recon stores as occurred_at. */
export function exportedDate(transaction: SandboxTransaction): number {
  return Math.floor(transaction.createdAt.getTime() / 1000) * 1000;
}
