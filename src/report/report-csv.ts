import { csvLine } from './csv-cell.ts';
import { decodeExplanation, describeConflict, describeTransaction } from './explanation.ts';
import { differenceMinor, minorToDecimal } from './money-format.ts';
import { isoInstant } from './report-time.ts';
import {
  isException,
  reportWarnings,
  STATUS_DISPLAY_ORDER,
  verdictsPerDay,
  verdictTotals,
  type OpenException,
  type RunReport,
} from './run-report.ts';

/**
 * The report as one csv file of sections (run, bridge, verdicts by status, per day, open exceptions), each a
 * title row, a header row and its rows, separated by an empty line. Amounts are decimals in major units of the
 * row's currency, plain (no grouping) so that a spreadsheet sums them. Warnings (a suspect run) come first.
 * A UTF-8 BOM tells Excel the encoding; every cell goes through csvCell (formula neutralization, quoting).
 */
export async function* renderCsv(
  report: RunReport,
  exceptionPages: AsyncIterable<readonly OpenException[]>,
  options: { readonly generatedAt: Date },
): AsyncGenerator<string> {
  const { run } = report;
  const totals = verdictTotals(report.verdictGroups);
  let head = '\uFEFF' + csvLine(['recon reconciliation report', `run ${run.runId}`]);
  for (const warning of reportWarnings(report)) head += csvLine(['WARNING', warning]);

  head += section(
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
    ],
  );

  head += section(
    'bridge per currency (difference = settled - expected)',
    ['currency', 'orders', 'unknown_orders', 'expected', 'settled', 'difference'],
    report.bridge.map((row) => [
      row.currency,
      row.orders,
      row.unknownOrders,
      minorToDecimal(row.expectedMinor, row.currency),
      minorToDecimal(row.settledMinor, row.currency),
      minorToDecimal(differenceMinor(row.settledMinor, row.expectedMinor), row.currency),
    ]),
  );

  head += section(
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
    'verdicts per day of order creation (UTC; unknown orders: day of their earliest transaction)',
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

  head += csvLine([`open exceptions (${totals.exceptions}, by order_id)`]);
  head += csvLine([
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
    'rule',
    'reason',
    'transactions',
    'warnings',
    'figures',
    'conflicts',
  ]);
  yield head;

  for await (const page of exceptionPages) {
    yield page.map(exceptionLine).join('');
  }
}

function section(
  title: string,
  header: readonly string[],
  rows: readonly (readonly (string | number | null)[])[],
): string {
  return '\r\n' + csvLine([title]) + csvLine(header) + rows.map(csvLine).join('');
}

function exceptionLine(exception: OpenException): string {
  const explanation = decodeExplanation(exception.explanation);
  const money = (minor: string) => minorToDecimal(minor, exception.currency);
  return csvLine([
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
    explanation.rule,
    explanation.reason,
    explanation.transactions.map(describeTransaction).join('; '),
    explanation.warnings.join('; '),
    explanation.figures.map(([name, minor]) => `${name}=${money(minor)}`).join('; '),
    explanation.conflicts.map((conflict) => describeConflict(conflict, exception.currency)).join('; '),
  ]);
}
