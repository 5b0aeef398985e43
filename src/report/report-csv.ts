import { CSV_DIALECTS, CsvAmount, csvLine, type CsvDialect, type CsvLocale } from './csv-cell.ts';
import { decodeExplanation, describeConflict, describeTransaction } from './explanation.ts';
import { moneyFirst, movedMoney } from './money-first.ts';
import { renderAhead } from './render-ahead.ts';
import { minorToDecimal } from './money-format.ts';
import { differenceByStatus, moneyMovedPerCurrency, type CurrencyMoneyMoved } from './report-money.ts';
import { isoInstant } from './report-time.ts';
import { bounded, NAME_SHOWN, NOTE_SHOWN } from './untrusted-text.ts';
import {
  accountName,
  isException,
  RECEIVED_LINES,
  reportWarnings,
  STATUS_DISPLAY_ORDER,
  verdictsPerDay,
  verdictTotals,
  type OpenException,
  type RunReport,
} from './run-report.ts';

/**
 * The report as one csv file of sections (run, bridge, the difference by status, settled per account, money moved per currency and per
 * day, verdicts by status and per day, the exceptions' ageing, open exceptions), each a title row, a header row and
 * its rows, separated by an empty line. Amounts are decimals in major units of the row's currency (its ISO 4217
 * exponent), plain (no grouping) so that a spreadsheet sums them; days are dates in the report's zone. Warnings (a suspect run) come first.
 * A UTF-8 BOM tells Excel the encoding; every cell goes through csvCell (formula neutralization, quoting). With
 * `locale: 'fr'` the separator is `;` and amounts take a decimal comma, as a spreadsheet set to French reads them.
 */
export async function* renderCsv(
  summary: RunReport | Promise<RunReport>,
  exceptionPages: AsyncIterable<readonly OpenException[]>,
  options: { readonly generatedAt: Date; readonly locale?: CsvLocale },
): AsyncGenerator<string> {
  const dialect: CsvDialect = CSV_DIALECTS[options.locale ?? 'en'];
  const line: Line = (values) => csvLine(values, dialect);
  // The summary may still be computed: the exceptions' lines are rendered meanwhile (render-ahead.ts).
  const exceptionLines = renderAhead(exceptionPages, (page) =>
    page.map((exception) => exceptionLine(exception, line)).join(''),
  );
  try {
    const report = await summary;
    yield csvHead(report, line, options);
    yield* exceptionLines;
  } finally {
    await exceptionLines.close();
  }
}

/** Every section before the open exceptions, and their title and header. */
function csvHead(report: RunReport, line: Line, options: { readonly generatedAt: Date }): string {
  const { run } = report;
  const totals = verdictTotals(report.verdictGroups);
  let head = '\uFEFF' + line(['recon reconciliation report', `run ${run.runId}`]);
  for (const warning of reportWarnings(report)) head += line(['WARNING', warning]);
  head += moneyFirstSections(report, line);

  head += section(
    line,
    'run',
    ['field', 'value'],
    [
      ['run_id', run.runId],
      ['as_of', isoInstant(run.asOf)],
      ['kind', run.kind],
      ['scope', run.description],
      ['nightly_date', run.nightlyDate],
      ['tolerance_minor', run.toleranceMinor],
      ['grace_hours', run.graceHours],
      ['started_at', isoInstant(run.startedAt)],
      ['finished_at', run.finishedAt === null ? null : isoInstant(run.finishedAt)],
      ['orders_in_scope', run.ordersInScope],
      ['not_found_count', run.notFoundCount],
      ['not_found', run.notFound.join(' ')],
      ['suspect', run.suspect ? 'yes' : 'no'],
      ['suspect_reason', run.suspectReason],
      ['open_exceptions', totals.exceptions],
      ['new', totals.byLifecycle.new],
      ['persisting', totals.byLifecycle.persisting],
      ['resolved', totals.byLifecycle.resolved],
      ['generated_at', isoInstant(options.generatedAt)],
      ['report_timezone', report.timeZone],
      ['window_from', report.moneyMoved.window?.from ?? null],
      ['window_to', report.moneyMoved.window?.to ?? null],
    ],
  );

  const differences = differenceByStatus(report.bridge, report.statusTotals);
  head += section(
    line,
    'bridge per currency (difference = settled - expected; at_risk: money the verdicts put at risk)',
    ['currency', 'orders', 'unknown_orders', 'expected', 'settled', 'difference', 'at_risk', 'at_risk_unknown'],
    differences.map(({ bridge, differenceMinor, atRiskMinor, atRiskUnknown }) => [
      bridge.currency,
      bridge.orders,
      bridge.unknownOrders,
      amount(bridge.expectedMinor, bridge.currency),
      amount(bridge.settledMinor, bridge.currency),
      amount(differenceMinor, bridge.currency),
      amount(atRiskMinor, bridge.currency),
      atRiskUnknown,
    ]),
  );

  head += section(
    line,
    "the difference by status (each currency's rows add up to its bridge; at_risk beside the difference)",
    ['currency', 'status', 'verdicts', 'expected', 'settled', 'difference', 'at_risk', 'at_risk_unknown'],
    differences.flatMap(({ bridge, parts }) =>
      parts.map((part) => [
        bridge.currency,
        part.status,
        part.verdicts,
        amount(part.expectedMinor, bridge.currency),
        amount(part.settledMinor, bridge.currency),
        amount(part.differenceMinor, bridge.currency),
        amount(part.atRiskMinor, bridge.currency),
        part.atRiskUnknown,
      ]),
    ),
  );

  head += section(
    line,
    "from the money received to the bridge's settled (each currency's lines add up to its settled; fees on the received line)",
    ['currency', 'step', 'line', 'orders', 'transactions', 'amount', 'fees'],
    report.receivedToBridge.map((line) => [
      line.currency,
      RECEIVED_LINES.indexOf(line.line) + 1,
      line.line,
      line.orders,
      line.transactions,
      amount(line.amountMinor, line.currency),
      line.feesMinor === null ? null : amount(line.feesMinor, line.currency),
    ]),
  );

  // Every run has this section, even of a single account: a spreadsheet finds its sections by their titles.
  head += section(
    line,
    "settled per account (succeeded transactions of the run's orders; settled = paid - refunded)",
    ['account', 'group', 'currency', 'orders', 'transactions', 'paid', 'refunded', 'settled'],
    report.accounts.map((account) => [
      accountName(account),
      account.accountGroup,
      account.currency,
      account.orders,
      account.transactions,
      amount(account.paidMinor, account.currency),
      amount(account.refundedMinor, account.currency),
      amount(account.settledMinor, account.currency),
    ]),
  );

  const window = report.moneyMoved.window;
  const days = window === null ? 'no dated verdict' : `${window.from} to ${window.to}, ${report.timeZone}`;
  head += section(
    line,
    `money moved per currency (${days}; fees: BILLINGFEES INCL. VAT; net = gross - refunds - fees)`,
    ['currency', 'transactions', 'payments', 'refunds_count', 'gross', 'refunds', 'fees', 'net'],
    moneyMovedPerCurrency(report.moneyMoved.days).map((total) => [
      total.currency,
      total.transactions,
      total.payments,
      total.refunds,
      amount(total.paidMinor, total.currency),
      amount(total.refundedMinor, total.currency),
      amount(total.feesMinor, total.currency),
      amount(total.netMinor, total.currency),
    ]),
  );

  head += section(
    line,
    `money moved per day (${days})`,
    ['day', 'currency', 'transactions', 'payments', 'refunds_count', 'gross', 'refunds', 'fees', 'net'],
    report.moneyMoved.days.map((day) => [
      day.day,
      day.currency,
      day.transactions,
      day.payments,
      day.refunds,
      amount(day.paidMinor, day.currency),
      amount(day.refundedMinor, day.currency),
      amount(day.feesMinor, day.currency),
      amount(day.netMinor, day.currency),
    ]),
  );

  head += section(
    line,
    'verdicts by status',
    ['status', 'verdicts', 'exception'],
    [
      ...STATUS_DISPLAY_ORDER.map((status) => [
        status,
        totals.byStatus.get(status) ?? 0,
        isException(status) ? 'yes' : 'no',
      ]),
      ['total', totals.verdicts, null],
    ],
  );

  head += section(
    line,
    `verdicts per day of order creation (${report.timeZone}; unknown orders: day of their earliest transaction)`,
    ['day', 'matched', 'pending', 'exceptions', 'total'],
    [
      ...verdictsPerDay(report.verdictGroups).map((day) => [
        day.day,
        day.matched,
        day.pending,
        day.exceptions,
        day.matched + day.pending + day.exceptions,
      ]),
      ...(totals.undated > 0 ? [['undated', null, null, null, totals.undated]] : []),
    ],
  );

  head += section(
    line,
    "open exceptions by status and age of their order (whole days at the run's as_of; at_risk: money at risk)",
    ['status', 'acknowledged', 'currency', 'order_age_bucket', 'exceptions', 'at_risk', 'at_risk_unknown'],
    report.ageing.map((cell) => [
      cell.status,
      cell.acknowledged ? 'yes' : 'no',
      cell.currency,
      cell.orderAgeBucket,
      cell.exceptions,
      amount(cell.atRiskMinor, cell.currency),
      cell.atRiskUnknown,
    ]),
  );

  const { verdicts, warnings, listed } = report.verdictWarnings;
  head += section(
    line,
    `warnings on the run's verdicts, whatever their status (${warnings} on ${verdicts} verdicts; the first ${listed.length} by order_id)`,
    ['order_id', 'status', 'currency', 'account', 'warning'],
    listed.map((warning) => [warning.orderId, warning.status, warning.currency, warning.identifier, warning.warning]),
  );

  head += '\r\n' + line([`open exceptions (${totals.exceptions}, by order_id)`]);
  head += line([
    'order_id',
    'known_order',
    'status',
    'lifecycle',
    'first_seen_at',
    'first_seen_run_id',
    'currency',
    'expected',
    'settled',
    'delta',
    'at_risk',
    'order_age_days',
    'acknowledged',
    'acknowledged_by',
    'acknowledged_login',
    'acknowledged_at',
    'last_note',
    'last_note_by',
    'last_note_login',
    'last_note_at',
    'rule',
    'reason',
    'transactions',
    'warnings',
    'figures',
    'conflicts',
  ]);
  return head;
}

/** The money before anything else: the last day's and the run's, then the money at risk, handled and not. */
function moneyFirstSections(report: RunReport, line: Line): string {
  const first = moneyFirst(report);
  const { window, lastDay } = first;
  const moved = window === null ? [] : first.currencies.filter(movedMoney);
  const row = (currency: string | null, days: string, from: string, to: string, total: CurrencyMoneyMoved) => [
    currency,
    days,
    from,
    to,
    total.transactions,
    amount(total.paidMinor, currency),
    amount(total.refundedMinor, currency),
    amount(total.feesMinor, currency),
    amount(total.netMinor, currency),
  ];
  return (
    section(
      line,
      `money first: the last day and the run's days (${window === null ? 'no dated verdict' : `${window.from} to ${window.to}, ${report.timeZone}`}; net = gross - refunds - fees)`,
      ['currency', 'days', 'from', 'to', 'transactions', 'gross', 'refunds', 'fees', 'net'],
      window === null || lastDay === null
        ? []
        : moved.flatMap(({ currency, lastDay: last, run }) => [
            row(currency, 'last_day', lastDay, lastDay, last),
            row(currency, 'run', window.from, window.to, run),
          ]),
    ) +
    section(
      line,
      'money at risk in the open exceptions, not handled and handled (acknowledged)',
      [
        'currency',
        'not_handled',
        'at_risk_not_handled',
        'at_risk_not_handled_unknown',
        'handled',
        'at_risk_handled',
        'at_risk_handled_unknown',
      ],
      [
        ...first.currencies
          .filter(({ atRisk }) => atRisk.notHandledExceptions > 0 || atRisk.handledExceptions > 0)
          .map(({ currency, atRisk }) => [
            currency,
            atRisk.notHandledExceptions,
            amount(atRisk.notHandledMinor, currency),
            atRisk.notHandledUnknown,
            atRisk.handledExceptions,
            amount(atRisk.handledMinor, currency),
            atRisk.handledUnknown,
          ]),
        ['all currencies', first.exceptionsNotHandled, null, null, first.exceptionsHandled, null, null],
      ],
    )
  );
}

type Cell = string | number | CsvAmount | null;
type Line = (values: readonly Cell[]) => string;

function section(line: Line, title: string, header: readonly string[], rows: readonly (readonly Cell[])[]): string {
  return '\r\n' + line([title]) + line(header) + rows.map(line).join('');
}

/** An amount in major units of its currency, plain, written with the dialect's decimal mark. */
function amount(minor: string, currency: string | null): CsvAmount {
  return new CsvAmount(minorToDecimal(minor, currency));
}

/** A name anybody typed, bounded (the notes too: the whole is in reporting.exception_actions). */
function name(text: string | null): string | null {
  return text === null ? null : bounded(text, NAME_SHOWN);
}

function exceptionLine(exception: OpenException, line: Line): string {
  const explanation = decodeExplanation(exception.explanation);
  const money = (minor: string) => amount(minor, exception.currency);
  return line([
    exception.orderId,
    exception.knownOrder ? 'yes' : 'no',
    exception.status,
    exception.lifecycle,
    exception.firstSeenAt === null ? null : isoInstant(exception.firstSeenAt),
    exception.firstSeenRunId,
    exception.currency,
    money(exception.expectedMinor),
    money(exception.settledMinor),
    money(exception.deltaMinor),
    exception.atRiskMinor === null ? null : money(exception.atRiskMinor),
    exception.orderAgeDays,
    exception.acknowledged ? 'yes' : 'no',
    name(exception.acknowledgedBy),
    name(exception.acknowledgedLogin),
    exception.acknowledgedAt === null ? null : isoInstant(exception.acknowledgedAt),
    exception.lastNote === null ? null : bounded(exception.lastNote, NOTE_SHOWN),
    name(exception.lastNoteBy),
    name(exception.lastNoteLogin),
    exception.lastNoteAt === null ? null : isoInstant(exception.lastNoteAt),
    explanation.rule,
    explanation.reason,
    explanation.transactions.map(describeTransaction).join('; '),
    explanation.warnings.join('; '),
    explanation.figures.map(([name, minor]) => `${name}=${minorToDecimal(minor, exception.currency)}`).join('; '),
    explanation.conflicts.map((conflict) => describeConflict(conflict, exception.currency)).join('; '),
  ]);
}
