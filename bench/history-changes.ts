import { mulberry32 } from './generate-export.ts';
import {
  AS_OF,
  reconcileScenarios,
  transactionIdOf,
  type BenchOrder,
  type BenchTransaction,
  type Operation,
} from './reconcile-scenarios.ts';
import { EXPORT_HEADER, exportLine, ORDERS_HEADER, orderCsvLine } from './scenario-csv.ts';

/**
 * What changes between two nightly runs of bench:history, as the service and the merchant change it: for 1% of the
 * orders, an export file of new or re-exported transactions and an orders csv of the orders whose status followed.
 * Pure and seeded: the same arguments give the same bytes. Each step changes other orders than the steps before it
 * (a shuffle of the orders, cut in turns), so what a change means only depends on the order's seeded scenario.
 */

const DAY = 24 * 60 * 60 * 1000;
const AS_OF_MS = Date.parse(AS_OF);

/** The `--as-of` of run `run` (from 1): AS_OF, one day later per run. */
export const asOfOfRun = (run: number) => new Date(AS_OF_MS + (run - 1) * DAY).toISOString();

/**
 * How an order changes:
 * - `refund`: money goes back on a paid order (part, or the rest);
 * - `capture`: an authorization is captured;
 * - `payment`: money that was missing arrives;
 * - `execcode`: the service re-exports a transaction with another EXECCODE (an approval granted or refused, an
 *   abandoned attempt finished, a refund that failed);
 * - `attempt`: a new refused attempt on a cancelled order.
 */
export type ChangeKind = 'refund' | 'capture' | 'payment' | 'execcode' | 'attempt';

export interface ChangeStep {
  /** The run these changes come before (2 and up). */
  run: number;
  /** The instant of that run's `--as-of`; every new transaction happened in the day before it. */
  asOf: string;
  /** The ORDERIDs changed, in order-id order: 1% of the orders. */
  orderIds: string[];
  /** An export file (EXPORT_COLUMNS) of the new and changed transactions. */
  exportCsv: string;
  /** An orders csv of the orders whose status changed with their money, a subset of orderIds. */
  ordersCsv: string;
  kinds: Record<ChangeKind, number>;
  /** Rows of each file (without the header). */
  exportRows: number;
  orderRows: number;
}

interface Picked {
  order: BenchOrder;
  /** The order's transactions, each with its TRANSACTIONID in the loaded data. */
  transactions: Array<BenchTransaction & { transactionId: string }>;
}

/** The orders changed per step: round(orders / 100), at least one. */
export const changedPerStep = (orders: number) => Math.max(1, Math.round(orders / 100));

/**
 * The change steps before runs 2..steps+1 of the data of `reconcileScenarios(orders)`, whose transactions carry
 * the TRANSACTIONIDs of transactionIdOf in sequence order (as bench/load-reconcile-data.ts and
 * bench/scenario-csv.ts load them).
 */
export function historyChanges(orders: number, steps: number, seed = 21): ChangeStep[] {
  const perStep = changedPerStep(orders);
  if (perStep * steps > orders) throw new Error(`${steps} steps of ${perStep} orders need more than ${orders} orders`);
  const stepOf = pickSteps(orders, steps, perStep, seed);
  const picked: Picked[][] = Array.from({ length: steps }, () => []);
  let sequence = 0;
  let orderIndex = 0;
  for (const { order, transactions } of reconcileScenarios(orders)) {
    const first = sequence + 1;
    sequence += transactions.length;
    if (!order) continue;
    const step = stepOf[orderIndex++]!;
    if (step === NOT_PICKED) continue;
    picked[step]!.push({
      order,
      transactions: transactions.map((t, i) => ({ ...t, transactionId: transactionIdOf(first + i) })),
    });
  }
  return picked.map((list, step) => changeStep(step + 2, list, seed));
}

const NOT_PICKED = 0xff;

/** Per order index, the step that changes it, or NOT_PICKED: a seeded shuffle cut into `steps` slices. */
function pickSteps(orders: number, steps: number, perStep: number, seed: number): Uint8Array {
  const random = mulberry32(seed);
  const indexes = new Uint32Array(orders);
  for (let i = 0; i < orders; i++) indexes[i] = i;
  for (let i = orders - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    const swap = indexes[i]!;
    indexes[i] = indexes[j]!;
    indexes[j] = swap;
  }
  const stepOf = new Uint8Array(orders).fill(NOT_PICKED);
  for (let step = 0; step < steps; step++)
    for (let k = step * perStep; k < (step + 1) * perStep; k++) stepOf[indexes[k]!] = step;
  return stepOf;
}

const between = (low: number, high: number, random: () => number) => low + Math.floor(random() * (high - low + 1));

function changeStep(run: number, list: readonly Picked[], seed: number): ChangeStep {
  const random = mulberry32(seed * 1000 + run);
  const dayStart = Date.parse(asOfOfRun(run - 1));
  // Whole seconds, like the export's DATE, within the day between the two runs.
  const during = () => dayStart + 1000 * between(1, DAY / 1000 - 1, random);
  const kinds: Record<ChangeKind, number> = { refund: 0, capture: 0, payment: 0, execcode: 0, attempt: 0 };
  let exportCsv = EXPORT_HEADER + '\n';
  let ordersCsv = ORDERS_HEADER + '\n';
  let exportRows = 0;
  let orderRows = 0;
  let newIds = 0;
  const add = (transaction: BenchTransaction) => {
    exportCsv += exportLine(transaction, `H${String(run).padStart(2, '0')}-${String(++newIds).padStart(9, '0')}`);
    exportRows++;
  };
  const reexport = (transaction: Picked['transactions'][number], execCode: string) => {
    exportCsv += exportLine({ ...transaction, execCode }, transaction.transactionId);
    exportRows++;
  };
  // The merchant's books follow most changes of money, not all: those that lag become exceptions.
  const follow = (order: BenchOrder, chance: number) => {
    if (random() >= chance) return;
    ordersCsv += orderCsvLine(order);
    orderRows++;
  };

  for (const { order, transactions } of list) {
    const succeeded = transactions.filter((t) => t.execCode === '0000');
    const money = succeeded.filter((t) => t.operation === 'payment' || t.operation === 'capture');
    const refunded = sum(succeeded.filter((t) => t.operation === 'refund'));
    const paid = sum(money);
    const waiting = transactions.find((t) => t.execCode === '0002' || t.execCode === '0003');
    const authorization = succeeded.find((t) => t.operation === 'authorization');
    const moved = (operation: Operation, amountMinor: number, currency = order.currency): BenchTransaction => ({
      orderId: order.orderId,
      operation,
      execCode: '0000',
      amountMinor,
      currency,
      occurredMs: during(),
    });

    if (paid > refunded) {
      kinds.refund++;
      const rest = paid - refunded;
      const amount = random() < 0.5 ? rest : Math.max(1, Math.floor((rest * between(10, 90, random)) / 100));
      add(moved('refund', amount, money[money.length - 1]!.currency));
      if (order.status === 'paid' || order.status === 'partially_refunded') {
        const refundedMinor = Math.min(order.amountMinor, order.refundedMinor + amount);
        follow(
          {
            ...order,
            refundedMinor,
            status: refundedMinor === order.amountMinor ? 'refunded' : 'partially_refunded',
          },
          0.7,
        );
      }
    } else if (authorization && money.length === 0) {
      kinds.capture++;
      add(moved('capture', authorization.amountMinor, authorization.currency));
      follow({ ...order, status: 'paid' }, 0.8);
    } else if (waiting) {
      kinds.execcode++;
      reexport(waiting, random() < 0.6 ? '0000' : '4001');
    } else if (refunded > 0) {
      kinds.execcode++;
      const refunds = succeeded.filter((t) => t.operation === 'refund');
      reexport(refunds[refunds.length - 1]!, '4001');
    } else if (order.status === 'cancelled') {
      kinds.attempt++;
      add({
        ...moved(order.method === 'instalment' ? 'authorization' : 'payment', order.amountMinor),
        execCode: '4001',
      });
    } else {
      kinds.payment++;
      if (order.method === 'instalment') {
        add(moved('authorization', order.amountMinor));
        add(moved('capture', order.amountMinor));
      } else add(moved('payment', order.amountMinor));
    }
  }
  return {
    run,
    asOf: asOfOfRun(run),
    orderIds: list.map((p) => p.order.orderId),
    exportCsv,
    ordersCsv,
    kinds,
    exportRows,
    orderRows,
  };
}

const sum = (transactions: readonly BenchTransaction[]) => transactions.reduce((total, t) => total + t.amountMinor, 0);
