import { moneyFirst } from './money-first.ts';
import { currencyExponent } from './money-format.ts';
import { differenceByStatus, moneyMovedPerCurrency, type CurrencyMoneyMoved } from './report-money.ts';
import { receivedByCurrency } from './received-lines.ts';
import { renderAhead } from './render-ahead.ts';
import { isoInstant } from './report-time.ts';
import { bounded, NAME_SHOWN, NOTE_SHOWN } from './untrusted-text.ts';
import { reportWarnings, verdictsPerDay, verdictTotals, type OpenException, type RunReport } from './run-report.ts';

/**
 * The report as one JSON document. Amounts are strings of minor units (`exponent` says where the decimal
 * point goes); days are dates in `timeZone`; explanations are the stored documents, unchanged. The open exceptions come last, one per line,
 * written page by page, so that a run with a million of them never sits in memory as one value.
 */
export async function* renderJson(
  summary: RunReport | Promise<RunReport>,
  exceptionPages: AsyncIterable<readonly OpenException[]>,
  options: { readonly generatedAt: Date },
): AsyncGenerator<string> {
  // The summary may still be computed: the exceptions are rendered meanwhile (render-ahead.ts), one per line.
  let first = true;
  const items = renderAhead(exceptionPages, (page) => {
    let chunk = '';
    for (const exception of page) {
      chunk += (first ? '\n' : ',\n') + JSON.stringify(exceptionJson(exception));
      first = false;
    }
    return chunk;
  });
  try {
    const report = await summary;
    const totals = verdictTotals(report.verdictGroups);
    const opening = JSON.stringify(jsonHead(report, options));
    // The head object, reopened to append the exceptions as its last member.
    yield `${opening.slice(0, -1)},"openExceptions":{"total":${totals.exceptions},"items":[`;
    yield* items;
    yield '\n]}}\n';
  } finally {
    await items.close();
  }
}

/** Everything but the open exceptions. */
function jsonHead(report: RunReport, options: { readonly generatedAt: Date }) {
  const { run } = report;
  const totals = verdictTotals(report.verdictGroups);
  return {
    report: 'reconciliation',
    generatedAt: isoInstant(options.generatedAt),
    warnings: reportWarnings(report),
    timeZone: report.timeZone,
    moneyFirst: moneyFirstJson(report),
    run: {
      runId: run.runId,
      kind: run.kind,
      description: run.description,
      nightlyRunId: run.nightlyRunId,
      nightlyDate: run.nightlyDate,
      choice: run.choice,
      asOf: isoInstant(run.asOf),
      scope: run.scope,
      toleranceMinor: run.toleranceMinor,
      graceHours: run.graceHours,
      startedAt: isoInstant(run.startedAt),
      finishedAt: run.finishedAt === null ? null : isoInstant(run.finishedAt),
      ordersInScope: run.ordersInScope,
      counts: run.counts,
      notFound: run.notFound,
      notFoundCount: run.notFoundCount,
      suspect: run.suspect,
      suspectReason: run.suspectReason,
    },
    totals: {
      verdicts: totals.verdicts,
      matched: totals.matched,
      pending: totals.pending,
      exceptions: totals.exceptions,
      unknownOrders: totals.unknownOrders,
      lifecycle: totals.byLifecycle,
      byStatus: Object.fromEntries(totals.byStatus),
    },
    bridge: differenceByStatus(report.bridge, report.statusTotals).map(
      ({ bridge, differenceMinor, atRiskMinor, atRiskUnknown, parts }) => ({
        currency: bridge.currency,
        exponent: currencyExponent(bridge.currency),
        orders: bridge.orders,
        unknownOrders: bridge.unknownOrders,
        expectedMinor: bridge.expectedMinor,
        settledMinor: bridge.settledMinor,
        differenceMinor,
        atRiskMinor,
        atRiskUnknown,
        // The difference explained: these add up to the currency's expected, settled, difference and money at risk.
        byStatus: parts.map((part) => ({
          status: part.status,
          verdicts: part.verdicts,
          expectedMinor: part.expectedMinor,
          settledMinor: part.settledMinor,
          differenceMinor: part.differenceMinor,
          atRiskMinor: part.atRiskMinor,
          atRiskUnknown: part.atRiskUnknown,
        })),
      }),
    ),
    // Each currency's lines add up to its settled, the last line.
    receivedToBridge: receivedByCurrency(report.receivedToBridge).map(({ currency, lines }) => ({
      currency,
      exponent: currencyExponent(currency),
      lines: lines.map((line) => ({
        line: line.line,
        orders: line.orders,
        transactions: line.transactions,
        amountMinor: line.amountMinor,
        feesMinor: line.feesMinor,
      })),
    })),
    // Always present, even for a single unnamed account: a program reads one shape. identifier null: no account.
    accounts: report.accounts.map((account) => ({
      identifier: account.identifier,
      accountGroup: account.accountGroup,
      currency: account.currency,
      exponent: currencyExponent(account.currency),
      orders: account.orders,
      transactions: account.transactions,
      paidMinor: account.paidMinor,
      refundedMinor: account.refundedMinor,
      settledMinor: account.settledMinor,
    })),
    moneyMoved: {
      window: report.moneyMoved.window,
      perCurrency: moneyMovedPerCurrency(report.moneyMoved.days).map((total) => ({
        ...total,
        exponent: currencyExponent(total.currency),
      })),
      perDay: report.moneyMoved.days.map((day) => ({ ...day, exponent: currencyExponent(day.currency) })),
    },
    ageing: report.ageing.map((cell) => ({ ...cell, exponent: currencyExponent(cell.currency) })),
    verdictsPerDay: verdictsPerDay(report.verdictGroups).map((day) => ({
      day: day.day,
      byStatus: Object.fromEntries(day.byStatus),
    })),
    undatedVerdicts: totals.undated,
    // Counted whole; listed up to what the report was asked to list, by order id.
    verdictWarnings: report.verdictWarnings,
  };
}

/** The money before anything else, amounts as strings of minor units with their currency's exponent. */
function moneyFirstJson(report: RunReport) {
  const first = moneyFirst(report);
  const moved = (total: CurrencyMoneyMoved) => {
    const { currency: _currency, ...figures } = total;
    return figures;
  };
  return {
    window: first.window,
    lastDay: first.lastDay,
    exceptionsNotHandled: first.exceptionsNotHandled,
    exceptionsHandled: first.exceptionsHandled,
    perCurrency: first.currencies.map(({ currency, lastDay, run, atRisk }) => ({
      currency,
      exponent: currencyExponent(currency),
      lastDay: moved(lastDay),
      run: moved(run),
      atRisk,
    })),
  };
}

/** A name anybody typed, bounded. */
function name(text: string | null): string | null {
  return text === null ? null : bounded(text, NAME_SHOWN);
}

function exceptionJson(exception: OpenException) {
  return {
    orderId: exception.orderId,
    knownOrder: exception.knownOrder,
    status: exception.status,
    lifecycle: exception.lifecycle,
    firstSeenRunId: exception.firstSeenRunId,
    firstSeenAt: exception.firstSeenAt === null ? null : isoInstant(exception.firstSeenAt),
    currency: exception.currency,
    exponent: currencyExponent(exception.currency),
    expectedMinor: exception.expectedMinor,
    settledMinor: exception.settledMinor,
    deltaMinor: exception.deltaMinor,
    atRiskMinor: exception.atRiskMinor,
    orderAgeDays: exception.orderAgeDays,
    acknowledged: exception.acknowledged,
    acknowledgedBy: name(exception.acknowledgedBy),
    acknowledgedLogin: name(exception.acknowledgedLogin),
    acknowledgedAt: exception.acknowledgedAt === null ? null : isoInstant(exception.acknowledgedAt),
    // Its first characters and how long it is: the whole note is in reporting.exception_actions.
    lastNote: exception.lastNote === null ? null : bounded(exception.lastNote, NOTE_SHOWN),
    lastNoteLength: exception.lastNote?.length ?? null,
    lastNoteBy: name(exception.lastNoteBy),
    lastNoteLogin: name(exception.lastNoteLogin),
    lastNoteAt: exception.lastNoteAt === null ? null : isoInstant(exception.lastNoteAt),
    explanation: exception.explanation,
  };
}
