import { compareCurrencies, moneyMovedPerCurrency, sumMinor, type CurrencyMoneyMoved } from './report-money.ts';
import type { RunReport } from './run-report.ts';

/**
 * What an accountant reads first in the morning, before any count of verdicts: the money of the run's last day and of
 * all its days per currency (gross, refunds, fees, net), the money the open exceptions put at risk, handled
 * (acknowledged) and not, and how many exceptions nobody has handled. Everything comes from rows the report holds
 * already (the money moved per day, the ageing): bounded by currencies and days, no query of its own.
 */
export interface MoneyFirst {
  /** The run's days (see runDays); null when the run has no dated verdict. */
  readonly window: { readonly from: string; readonly to: string } | null;
  /** The last of them, `YYYY-MM-DD` in the report's zone; null with the window. */
  readonly lastDay: string | null;
  /** One per currency that moved money on the run's days or has open exceptions, in currency order. */
  readonly currencies: readonly CurrencyMoneyFirst[];
  /** Open exceptions not acknowledged: new, reopened, or whose acknowledgement lapsed. */
  readonly exceptionsNotHandled: number;
  readonly exceptionsHandled: number;
}

export interface CurrencyMoneyFirst {
  /** Null for transactions without a CURRENCY. */
  readonly currency: string | null;
  /** The money moved on the last day (zeros when none). */
  readonly lastDay: CurrencyMoneyMoved;
  /** The money moved on all the run's days. */
  readonly run: CurrencyMoneyMoved;
  readonly atRisk: {
    /** Of the exceptions not handled; those whose money at risk is unknown are counted apart. */
    readonly notHandledMinor: string;
    readonly notHandledUnknown: number;
    readonly notHandledExceptions: number;
    readonly handledMinor: string;
    readonly handledUnknown: number;
    readonly handledExceptions: number;
  };
}

export function moneyFirst(report: RunReport): MoneyFirst {
  const { window, days } = report.moneyMoved;
  const lastDay = window?.to ?? null;
  const run = moneyMovedPerCurrency(days);
  const last = moneyMovedPerCurrency(days.filter((day) => day.day === lastDay));
  const currencies = [
    ...new Set([...run.map((total) => total.currency), ...report.ageing.map((cell) => cell.currency)]),
  ].sort(compareCurrencies);
  const cellsOf = (currency: string | null, acknowledged: boolean) =>
    report.ageing.filter((cell) => cell.currency === currency && cell.acknowledged === acknowledged);
  const count = (acknowledged: boolean) =>
    report.ageing.reduce((sum, cell) => sum + (cell.acknowledged === acknowledged ? cell.exceptions : 0), 0);
  return {
    window,
    lastDay,
    currencies: currencies.map((currency) => {
      const notHandled = cellsOf(currency, false);
      const handled = cellsOf(currency, true);
      return {
        currency,
        lastDay: last.find((total) => total.currency === currency) ?? noMoney(currency),
        run: run.find((total) => total.currency === currency) ?? noMoney(currency),
        atRisk: {
          notHandledMinor: sumMinor(notHandled.map((cell) => cell.atRiskMinor)),
          notHandledUnknown: notHandled.reduce((sum, cell) => sum + cell.atRiskUnknown, 0),
          notHandledExceptions: notHandled.reduce((sum, cell) => sum + cell.exceptions, 0),
          handledMinor: sumMinor(handled.map((cell) => cell.atRiskMinor)),
          handledUnknown: handled.reduce((sum, cell) => sum + cell.atRiskUnknown, 0),
          handledExceptions: handled.reduce((sum, cell) => sum + cell.exceptions, 0),
        },
      };
    }),
    exceptionsNotHandled: count(false),
    exceptionsHandled: count(true),
  };
}

/** Whether the currency moved money on the run's days: a succeeded transaction, or a fee on a refused one. */
export function movedMoney(currency: CurrencyMoneyFirst): boolean {
  return currency.run.transactions > 0 || currency.run.feesMinor !== '0';
}

function noMoney(currency: string | null): CurrencyMoneyMoved {
  return {
    currency,
    transactions: 0,
    payments: 0,
    refunds: 0,
    paidMinor: '0',
    refundedMinor: '0',
    feesMinor: '0',
    netMinor: '0',
  };
}
