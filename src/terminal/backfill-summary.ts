import type { BackfillResult } from '../backfill/backfill-result.ts';
import { formatAmount } from '../report/money-format.ts';
import { printable } from '../report/report-table.ts';
import { describeNotFound } from '../report/run-report.ts';
import { fileJson, formatFileSummary } from './file-summary.ts';
import { runJson } from './run-summary.ts';
import { formatTextTable } from './text-table.ts';

/**
 * `recon backfill` on a terminal: a line per request (as ingest prints a file), the run and its counts, a table of
 * the orders' verdicts, then their warnings (a payment on the wrong account...), the notes on orders whose export
 * may lag and the ids nothing was found for.
 */
export function formatBackfillSummary(result: BackfillResult): string {
  const { run } = result;
  const lines = result.requests.map((request) => printable(formatFileSummary(request)));
  const counts = Object.entries(run.counts)
    .filter(([, n]) => n > 0)
    .map(([status, n]) => `${status}=${n}`);
  lines.push(
    `run ${run.runId} as of ${run.asOf.toISOString()}: ${run.ordersInScope} verdicts${counts.length > 0 ? `: ${counts.join(' ')}` : ''}`,
  );
  if (result.verdicts.length > 0) {
    lines.push(
      '',
      formatTextTable(
        ['order id', 'status', 'lifecycle', 'expected', 'settled', 'delta', 'currency', 'reason'],
        result.verdicts.map((verdict) => [
          printable(verdict.orderId),
          verdict.status,
          verdict.lifecycle,
          formatAmount(verdict.expectedMinor, verdict.currency),
          formatAmount(verdict.settledMinor, verdict.currency),
          formatAmount(verdict.deltaMinor, verdict.currency),
          verdict.currency === null ? null : printable(verdict.currency),
          verdict.reason === null ? null : printable(verdict.reason),
        ]),
        [3, 4, 5],
      ),
    );
  }
  const notes = result.verdicts.flatMap((verdict) => [
    ...verdict.warnings.map((warning) => `warning: ${printable(verdict.orderId)}: ${printable(warning)}`),
    ...(verdict.lagNote === null ? [] : [`note: ${printable(verdict.lagNote)}`]),
  ]);
  if (run.notFoundCount > 0)
    notes.push(`not found (no order, no succeeded transaction): ${describeNotFound(run, 10, printable)}`);
  if (notes.length > 0) lines.push('', ...notes);
  return lines.join('\n');
}

/** `--json`: one object; amounts stay strings of minor units, instants ISO 8601. */
export function formatBackfillJson(result: BackfillResult): string {
  return JSON.stringify({
    requests: result.requests.map((request) => ({
      ...fileJson(request),
      orderIds: request.orderIds,
      identifier: request.identifier,
    })),
    run: runJson(result.run),
    verdicts: result.verdicts.map((verdict) => ({
      ...verdict,
      orderCreatedAt: verdict.orderCreatedAt?.toISOString() ?? null,
    })),
  });
}
