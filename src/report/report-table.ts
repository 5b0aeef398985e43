import { formatTextTable } from '../terminal/text-table.ts';
import { decodeExplanation } from './explanation.ts';
import { formatAmount } from './money-format.ts';
import { ageingRows, differenceByStatus, moneyMovedPerCurrency, type CurrencyMoneyMoved } from './report-money.ts';
import { moneyFirst, movedMoney } from './money-first.ts';
import { bounded } from './untrusted-text.ts';
import { RECEIVED_LABELS, receivedByCurrency } from './received-lines.ts';
import { humanInstant } from './report-time.ts';
import {
  AGE_BUCKETS,
  describeNotFound,
  accountName,
  isException,
  reportWarnings,
  runChoiceNote,
  runTitle,
  showsAccounts,
  STATUS_DISPLAY_ORDER,
  verdictTotals,
  type OpenException,
  type RunReport,
} from './run-report.ts';

/**
 * The report for a terminal: the run, the bridge and its difference by status, the money moved, counts per status,
 * the exceptions' ageing, then the oldest open exceptions (at most as many as given: the full list is the csv's or
 * the json's). Values from the data pass through `printable`:
 * an order id holding escape sequences must not drive the reader's terminal.
 */
export function renderTable(
  report: RunReport,
  oldest: readonly OpenException[],
  options: { readonly generatedAt: Date },
): string {
  const { run } = report;
  const totals = verdictTotals(report.verdictGroups);
  const warnings = reportWarnings(report).map((warning) => `!!! ${printable(warning)}`);
  const note = runChoiceNote(run.choice);
  const lines: string[] = [
    `Reconciliation run ${run.runId}: ${printable(runTitle(run))}, as of ${humanInstant(run.asOf)}${note ? ` (${note})` : ''}`,
    ...warnings,
    ...moneyFirstLines(report),
    '',
  ];
  lines.push(
    `tolerance ${run.toleranceMinor} minor units; grace ${run.graceHours} h`,
    `started ${humanInstant(run.startedAt)}, finished ${run.finishedAt === null ? 'never' : humanInstant(run.finishedAt)}; report generated ${humanInstant(options.generatedAt)}`,
    `${totals.verdicts} verdicts: ${totals.matched} matched, ${totals.pending} pending, ${totals.exceptions} open exceptions` +
      ` (${totals.byLifecycle.new} new, ${totals.byLifecycle.persisting} persisting), ${totals.byLifecycle.resolved} resolved in this run`,
  );
  if (run.notFoundCount > 0) {
    lines.push(`not found: ${describeNotFound(run, 10, (id) => bounded(printable(id), ID_WIDTH))}`);
  }

  const differences = differenceByStatus(report.bridge, report.statusTotals);
  lines.push('', 'Bridge per currency (difference = settled - expected; at risk: money the verdicts put at risk)');
  lines.push(
    formatTextTable(
      ['currency', 'orders', 'unknown orders', 'expected', 'settled', 'difference', 'at risk'],
      differences.map(({ bridge, differenceMinor, atRiskMinor, atRiskUnknown }) => [
        printable(bridge.currency),
        String(bridge.orders),
        String(bridge.unknownOrders),
        formatAmount(bridge.expectedMinor, bridge.currency),
        formatAmount(bridge.settledMinor, bridge.currency),
        formatAmount(differenceMinor, bridge.currency),
        atRiskText(atRiskMinor, atRiskUnknown, bridge.currency),
      ]),
      [1, 2, 3, 4, 5, 6],
    ),
  );

  if (differences.some(({ parts }) => parts.length > 0)) {
    lines.push(
      '',
      "The difference by status, with the money at risk beside it (each currency's rows add up to its bridge)",
    );
    lines.push(
      formatTextTable(
        ['currency', 'status', 'verdicts', 'expected', 'settled', 'difference', 'at risk'],
        differences.flatMap(({ bridge, parts }) =>
          parts.map((part) => [
            printable(bridge.currency),
            part.status,
            String(part.verdicts),
            formatAmount(part.expectedMinor, bridge.currency),
            formatAmount(part.settledMinor, bridge.currency),
            formatAmount(part.differenceMinor, bridge.currency),
            atRiskText(part.atRiskMinor, part.atRiskUnknown, bridge.currency),
          ]),
        ),
        [2, 3, 4, 5, 6],
      ),
    );
  }

  lines.push(...receivedLines(report));
  lines.push(...accountLines(report));
  lines.push(...moneyMovedLines(report));

  lines.push('', 'Verdicts by status');
  const statuses = STATUS_DISPLAY_ORDER.filter((status) => (totals.byStatus.get(status) ?? 0) > 0);
  lines.push(
    formatTextTable(
      ['status', 'verdicts', 'kind'],
      [
        ...statuses.map((status) => [
          status,
          String(totals.byStatus.get(status)),
          isException(status) ? 'exception' : status,
        ]),
        ['total', String(totals.verdicts), ''],
      ],
      [1],
    ),
  );

  const ageing = ageingRows(report.ageing);
  if (ageing.length > 0) {
    lines.push('', "Open exceptions by age of their order (days at the run's as_of): count and money at risk");
    lines.push(
      formatTextTable(
        ['status', 'currency', ...AGE_BUCKETS, 'at risk'],
        ageing.map((row) => [
          row.status,
          printable(row.currency ?? ''),
          ...AGE_BUCKETS.map((bucket) => {
            const cell = row.buckets[bucket];
            return cell.exceptions === 0 ? '' : `${cell.exceptions} · ${formatAmount(cell.atRiskMinor, row.currency)}`;
          }),
          formatAmount(row.atRiskMinor, row.currency) +
            (row.atRiskUnknown > 0 ? ` (+${row.atRiskUnknown} unknown)` : ''),
        ]),
        [2, 3, 4, 5, 6, 7],
      ),
    );
  }

  const acknowledged = report.ageing.reduce((sum, cell) => sum + (cell.acknowledged ? cell.exceptions : 0), 0);
  lines.push(
    '',
    `Open exceptions: ${totals.exceptions}${acknowledged > 0 ? ` (${acknowledged} acknowledged)` : ''}${totals.exceptions > 0 ? ', oldest first' : ''}`,
  );
  if (oldest.length > 0) {
    lines.push(
      formatTextTable(
        [
          'order id',
          'status',
          'lifecycle',
          'first seen',
          'order age',
          'currency',
          'expected',
          'settled',
          'delta',
          'at risk',
          'ack',
          'reason',
          'last note',
        ],
        oldest.map((exception) => [
          bounded(printable(exception.orderId), ID_WIDTH),
          exception.status,
          exception.lifecycle ?? '',
          exception.firstSeenAt === null ? '' : humanInstant(exception.firstSeenAt).slice(0, 10),
          exception.orderAgeDays === null ? '' : `${exception.orderAgeDays} d`,
          printable(exception.currency ?? ''),
          formatAmount(exception.expectedMinor, exception.currency),
          formatAmount(exception.settledMinor, exception.currency),
          formatAmount(exception.deltaMinor, exception.currency),
          exception.atRiskMinor === null ? 'unknown' : formatAmount(exception.atRiskMinor, exception.currency),
          exception.acknowledged ? 'yes' : '',
          shorten(printable(decodeExplanation(exception.explanation).reason ?? ''), REASON_WIDTH),
          bounded(printable(exception.lastNote ?? ''), NOTE_WIDTH),
        ]),
        [4, 6, 7, 8, 9],
      ),
    );
  }
  const more = totals.exceptions - oldest.length;
  if (more > 0) lines.push(`... and ${more} more: \`recon report --format csv\` or \`--format json\` lists them all`);
  lines.push(...warningLines(report));
  // Repeated at the end: after a long list the top of the report has scrolled away.
  if (warnings.length > 0) lines.push('', ...warnings);
  return lines.join('\n') + '\n';
}

/**
 * The money before anything else: per currency, the last day's and the run's gross, refunds, fees and net, then the
 * money the open exceptions put at risk, not handled and handled, and how many nobody has handled.
 */
function moneyFirstLines(report: RunReport): string[] {
  const first = moneyFirst(report);
  const lines = [''];
  const { window, lastDay } = first;
  if (window === null || lastDay === null) {
    lines.push('Money: the run has no dated verdict, so no days');
  } else {
    lines.push(
      `Money of the last day, ${lastDay}, and of the run's days, ${window.from} to ${window.to} (${report.timeZone}; net = gross - refunds - fees)`,
    );
    const moved = first.currencies.filter(movedMoney);
    const row = (label: string, total: CurrencyMoneyMoved) => [
      printable(total.currency ?? ''),
      label,
      formatAmount(total.paidMinor, total.currency),
      formatAmount(total.refundedMinor, total.currency),
      formatAmount(total.feesMinor, total.currency),
      formatAmount(total.netMinor, total.currency),
    ];
    lines.push(
      moved.length === 0
        ? 'no succeeded transaction on those days'
        : formatTextTable(
            ['currency', 'days', 'gross', 'refunds', 'fees', 'net'],
            moved.flatMap((currency) => [row('last day', currency.lastDay), row("the run's days", currency.run)]),
            [2, 3, 4, 5],
          ),
    );
  }
  lines.push(
    '',
    `Open exceptions not handled: ${first.exceptionsNotHandled}; handled (acknowledged): ${first.exceptionsHandled}`,
  );
  const atRisk = first.currencies.filter(
    ({ atRisk }) => atRisk.notHandledExceptions > 0 || atRisk.handledExceptions > 0,
  );
  if (atRisk.length > 0) {
    lines.push(
      formatTextTable(
        ['currency', 'at risk, not handled', 'at risk, handled'],
        atRisk.map(({ currency, atRisk: money }) => [
          printable(currency ?? ''),
          atRiskText(money.notHandledMinor, money.notHandledUnknown, currency),
          atRiskText(money.handledMinor, money.handledUnknown, currency),
        ]),
        [1, 2],
      ),
    );
  }
  return lines;
}

/** From the money received to the bridge's settled, per currency: each currency's lines add up to its settled. */
function receivedLines(report: RunReport): string[] {
  if (report.receivedToBridge.length === 0) return [];
  return [
    '',
    "From the money received to the bridge's settled (each currency's lines add up to its settled; fees beside)",
    formatTextTable(
      ['currency', 'line', 'orders', 'transactions', 'amount', 'fees'],
      receivedByCurrency(report.receivedToBridge).flatMap(({ currency, lines }) =>
        lines.map((line) => [
          printable(currency),
          RECEIVED_LABELS[line.line],
          line.orders === null ? '' : String(line.orders),
          line.transactions === null ? '' : String(line.transactions),
          formatAmount(line.amountMinor, currency),
          line.feesMinor === null ? '' : formatAmount(line.feesMinor, currency),
        ]),
      ),
      [2, 3, 4, 5],
    ),
  ];
}

/** The warnings on the run's verdicts, which change no status and so are in no list of exceptions: counted, the first listed. */
function warningLines(report: RunReport): string[] {
  const { verdicts, warnings, listed } = report.verdictWarnings;
  if (warnings === 0) return ['', "Warnings on the run's verdicts: none"];
  const lines = [
    '',
    `Warnings on the run's verdicts: ${warnings} on ${verdicts} verdict${verdicts === 1 ? '' : 's'}, whatever their status (a warning changes none), by order id`,
    formatTextTable(
      ['order id', 'status', 'currency', 'account', 'warning'],
      listed.map((warning) => [
        bounded(printable(warning.orderId), ID_WIDTH),
        warning.status,
        printable(warning.currency ?? ''),
        bounded(printable(warning.identifier ?? ''), ID_WIDTH),
        bounded(printable(warning.warning), REASON_WIDTH),
      ]),
    ),
  ];
  const more = warnings - listed.length;
  if (more > 0)
    lines.push(`... and ${more} more: \`recon report --format csv\` lists more, reporting.warnings every current one`);
  return lines;
}

/** Settled per account and currency, when the run's transactions went through more than a single unnamed account. */
function accountLines(report: RunReport): string[] {
  if (!showsAccounts(report.accounts)) return [];
  return [
    '',
    "Settled per account (succeeded transactions of the run's orders; settled = paid - refunded)",
    formatTextTable(
      ['account', 'group', 'currency', 'orders', 'transactions', 'paid', 'refunded', 'settled'],
      report.accounts.map((account) => [
        bounded(printable(accountName(account)), ID_WIDTH),
        bounded(printable(account.accountGroup ?? ''), ID_WIDTH),
        printable(account.currency ?? ''),
        String(account.orders),
        String(account.transactions),
        formatAmount(account.paidMinor, account.currency),
        formatAmount(account.refundedMinor, account.currency),
        formatAmount(account.settledMinor, account.currency),
      ]),
      [3, 4, 5, 6, 7],
    ),
  ];
}

/** The terminal shows the latest days; the csv and the json every day of the window. */
const DAYS_SHOWN = 31;

function moneyMovedLines(report: RunReport): string[] {
  const { window, days } = report.moneyMoved;
  if (window === null) return ['', 'Money moved: the run has no dated verdict, so no days'];
  const lines = [
    '',
    `Money moved ${window.from} to ${window.to} (${report.timeZone}), every order's transactions; fees: BILLINGFEES INCL. VAT`,
  ];
  const totals = moneyMovedPerCurrency(days);
  if (totals.length === 0) return [...lines, 'no succeeded transaction on those days'];
  lines.push(
    formatTextTable(
      ['currency', 'transactions', 'gross', 'refunds', 'fees', 'net'],
      totals.map((total) => [
        printable(total.currency ?? ''),
        String(total.transactions),
        formatAmount(total.paidMinor, total.currency),
        formatAmount(total.refundedMinor, total.currency),
        formatAmount(total.feesMinor, total.currency),
        formatAmount(total.netMinor, total.currency),
      ]),
      [1, 2, 3, 4, 5],
    ),
  );
  const shownDays = [...new Set(days.map((day) => day.day))].slice(-DAYS_SHOWN);
  const first = shownDays[0]!;
  lines.push(
    '',
    `Money moved per day${shownDays.length < new Set(days.map((day) => day.day)).size ? ` (the last ${DAYS_SHOWN} days with money; the csv lists every day)` : ''}`,
    formatTextTable(
      ['day', 'currency', 'transactions', 'gross', 'refunds', 'fees', 'net'],
      days
        .filter((day) => day.day >= first)
        .map((day) => [
          day.day,
          printable(day.currency ?? ''),
          String(day.transactions),
          formatAmount(day.paidMinor, day.currency),
          formatAmount(day.refundedMinor, day.currency),
          formatAmount(day.feesMinor, day.currency),
          formatAmount(day.netMinor, day.currency),
        ]),
      [2, 3, 4, 5, 6],
    ),
  );
  return lines;
}

/** `12.50`, or `12.50 (+2 unknown)` when some verdicts' money at risk is not known. */
function atRiskText(minor: string, unknown: number, currency: string | null): string {
  return formatAmount(minor, currency) + (unknown > 0 ? ` (+${unknown} unknown)` : '');
}

/**
 * Reasons are one sentence, some long: the table keeps their start, the csv and html more. Notes, ids and names are
 * anybody's text: the table keeps their start and says how long they are (untrusted-text.ts).
 */
const REASON_WIDTH = 100;
const NOTE_WIDTH = 40;
const ID_WIDTH = 40;

function shorten(text: string, width: number): string {
  return text.length <= width ? text : `${text.slice(0, width - 1)}…`;
}

/** Line breaks become spaces; other control characters (ESC, ...) and bidi overrides U+FFFD: data must not steer the terminal. */
export function printable(text: string): string {
  return (
    text
      .replace(/[\t\n\r]+/g, ' ')
      // eslint-disable-next-line no-control-regex
      .replace(/[\u0000-\u001f\u007f-\u009f\u200e\u200f\u202a-\u202e\u2066-\u2069]/g, '\uFFFD')
  );
}
