import { formatTextTable } from '../terminal/text-table.ts';
import { decodeExplanation } from './explanation.ts';
import { differenceMinor, formatAmount } from './money-format.ts';
import { humanInstant } from './report-time.ts';
import {
  describeNotFound,
  isException,
  reportWarnings,
  runChoiceNote,
  runTitle,
  STATUS_DISPLAY_ORDER,
  verdictTotals,
  type OpenException,
  type RunReport,
} from './run-report.ts';

/**
 * The report for a terminal: the run, the bridge, counts per status, then the oldest open exceptions (at most
 * as many as given: the full list is the csv's or the json's). Values from the data pass through `printable`:
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
  ];
  lines.push(
    `tolerance ${run.toleranceMinor} minor units; grace ${run.graceHours} h`,
    `started ${humanInstant(run.startedAt)}, finished ${run.finishedAt === null ? 'never' : humanInstant(run.finishedAt)}; report generated ${humanInstant(options.generatedAt)}`,
    `${totals.verdicts} verdicts: ${totals.matched} matched, ${totals.pending} pending, ${totals.exceptions} open exceptions` +
      ` (${totals.byLifecycle.new} new, ${totals.byLifecycle.persisting} persisting), ${totals.byLifecycle.resolved} resolved in this run`,
  );
  if (run.notFoundCount > 0) lines.push(`not found: ${describeNotFound(run, 10, printable)}`);

  lines.push('', 'Bridge per currency (difference = settled - expected)');
  lines.push(
    formatTextTable(
      ['currency', 'orders', 'unknown orders', 'expected', 'settled', 'difference'],
      report.bridge.map((row) => [
        printable(row.currency),
        String(row.orders),
        String(row.unknownOrders),
        formatAmount(row.expectedMinor, row.currency),
        formatAmount(row.settledMinor, row.currency),
        formatAmount(differenceMinor(row.settledMinor, row.expectedMinor), row.currency),
      ]),
      [1, 2, 3, 4, 5],
    ),
  );

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

  lines.push('', `Open exceptions: ${totals.exceptions}${totals.exceptions > 0 ? ', oldest first' : ''}`);
  if (oldest.length > 0) {
    lines.push(
      formatTextTable(
        ['order id', 'status', 'lifecycle', 'since', 'currency', 'expected', 'settled', 'delta', 'reason'],
        oldest.map((exception) => [
          printable(exception.orderId),
          exception.status,
          exception.lifecycle ?? '',
          exception.firstSeenAt === null ? '' : humanInstant(exception.firstSeenAt).slice(0, 10),
          printable(exception.currency ?? ''),
          formatAmount(exception.expectedMinor, exception.currency),
          formatAmount(exception.settledMinor, exception.currency),
          formatAmount(exception.deltaMinor, exception.currency),
          shorten(printable(decodeExplanation(exception.explanation).reason ?? ''), REASON_WIDTH),
        ]),
        [5, 6, 7],
      ),
    );
  }
  const more = totals.exceptions - oldest.length;
  if (more > 0) lines.push(`... and ${more} more: \`recon report --format csv\` or \`--format json\` lists them all`);
  // Repeated at the end: after a long list the top of the report has scrolled away.
  if (warnings.length > 0) lines.push('', ...warnings);
  return lines.join('\n') + '\n';
}

/** Reasons are one sentence, some long: the table keeps their start, the csv and html the whole. */
const REASON_WIDTH = 100;

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
