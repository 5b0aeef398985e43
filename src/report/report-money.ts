import {
  AGE_BUCKETS,
  STATUS_DISPLAY_ORDER,
  type AgeBucket,
  type AgeingCell,
  type CurrencyBridge,
  type SettlementDay,
  type StatusTotal,
} from './run-report.ts';
import type { VerdictStatus } from '../db/schema.ts';

/**
 * The sums every format shows of the report's money, from rows bounded by currencies, statuses and days. Amounts stay
 * digit strings of minor units, added as bigint.
 */

export interface CurrencyMoneyMoved {
  readonly currency: string | null;
  readonly transactions: number;
  readonly payments: number;
  readonly refunds: number;
  readonly paidMinor: string;
  readonly refundedMinor: string;
  readonly feesMinor: string;
  readonly netMinor: string;
}

/** Gross -> refunds -> fees -> net per currency over the window's days, in currency order. */
export function moneyMovedPerCurrency(days: readonly SettlementDay[]): CurrencyMoneyMoved[] {
  const totals = new Map<
    string | null,
    { transactions: number; payments: number; refunds: number; paid: bigint; refunded: bigint; fees: bigint }
  >();
  for (const day of days) {
    const total = totals.get(day.currency) ?? {
      transactions: 0,
      payments: 0,
      refunds: 0,
      paid: 0n,
      refunded: 0n,
      fees: 0n,
    };
    total.transactions += day.transactions;
    total.payments += day.payments;
    total.refunds += day.refunds;
    total.paid += BigInt(day.paidMinor);
    total.refunded += BigInt(day.refundedMinor);
    total.fees += BigInt(day.feesMinor);
    totals.set(day.currency, total);
  }
  return [...totals]
    .sort(([a], [b]) => compareCurrencies(a, b))
    .map(([currency, total]) => ({
      currency,
      transactions: total.transactions,
      payments: total.payments,
      refunds: total.refunds,
      paidMinor: total.paid.toString(),
      refundedMinor: total.refunded.toString(),
      feesMinor: total.fees.toString(),
      netMinor: (total.paid - total.refunded - total.fees).toString(),
    }));
}

export interface CurrencyDifference {
  readonly bridge: CurrencyBridge;
  readonly differenceMinor: string;
  /** The money the currency's verdicts put at risk: the sum of its parts'. */
  readonly atRiskMinor: string;
  readonly atRiskUnknown: number;
  /** The statuses of this currency in the order people read them; their differences add up to differenceMinor. */
  readonly parts: readonly StatusTotal[];
}

/** Each currency's bridge with its difference explained by status, and the money at risk beside it. */
export function differenceByStatus(
  bridge: readonly CurrencyBridge[],
  statusTotals: readonly StatusTotal[],
): CurrencyDifference[] {
  return bridge.map((row) => {
    const parts = statusTotals
      .filter((part) => part.currency === row.currency)
      .sort((a, b) => STATUS_DISPLAY_ORDER.indexOf(a.status) - STATUS_DISPLAY_ORDER.indexOf(b.status));
    return {
      bridge: row,
      differenceMinor: (BigInt(row.settledMinor) - BigInt(row.expectedMinor)).toString(),
      atRiskMinor: sumMinor(parts.map((part) => part.atRiskMinor)),
      atRiskUnknown: parts.reduce((sum, part) => sum + part.atRiskUnknown, 0),
      parts,
    };
  });
}

/** One status and currency of the ageing, with a cell per bucket (zeros where none). */
export interface AgeingRow {
  readonly status: VerdictStatus;
  readonly currency: string | null;
  readonly buckets: Readonly<Record<AgeBucket, { readonly exceptions: number; readonly atRiskMinor: string }>>;
  readonly exceptions: number;
  readonly atRiskMinor: string;
  readonly atRiskUnknown: number;
}

/** The ageing as a table: a row per status and currency (statuses in reading order), a column per bucket. */
export function ageingRows(cells: readonly AgeingCell[]): AgeingRow[] {
  const rows = new Map<string, { status: VerdictStatus; currency: string | null; cells: AgeingCell[] }>();
  for (const cell of cells) {
    const key = `${cell.status}\u0000${cell.currency ?? ''}`;
    const row = rows.get(key) ?? { status: cell.status, currency: cell.currency, cells: [] };
    row.cells.push(cell);
    rows.set(key, row);
  }
  return [...rows.values()]
    .sort(
      (a, b) =>
        STATUS_DISPLAY_ORDER.indexOf(a.status) - STATUS_DISPLAY_ORDER.indexOf(b.status) ||
        compareCurrencies(a.currency, b.currency),
    )
    .map(({ status, currency, cells: own }) => {
      const buckets = Object.fromEntries(
        AGE_BUCKETS.map((bucket) => {
          const inBucket = own.filter((cell) => cell.orderAgeBucket === bucket);
          return [
            bucket,
            {
              exceptions: inBucket.reduce((sum, cell) => sum + cell.exceptions, 0),
              atRiskMinor: sumMinor(inBucket.map((cell) => cell.atRiskMinor)),
            },
          ];
        }),
      ) as AgeingRow['buckets'];
      return {
        status,
        currency,
        buckets,
        exceptions: own.reduce((sum, cell) => sum + cell.exceptions, 0),
        atRiskMinor: sumMinor(own.map((cell) => cell.atRiskMinor)),
        atRiskUnknown: own.reduce((sum, cell) => sum + cell.atRiskUnknown, 0),
      };
    });
}

export function sumMinor(amounts: readonly string[]): string {
  return amounts.reduce((sum, amount) => sum + BigInt(amount), 0n).toString();
}

export function compareCurrencies(a: string | null, b: string | null): number {
  const left = a ?? '';
  const right = b ?? '';
  return left < right ? -1 : left > right ? 1 : 0;
}
