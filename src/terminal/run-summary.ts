import type { RunSummary } from '../reconcile/reconcile.ts';
import { scopeToJson } from '../reconcile/reconcile-scope.ts';
import { differenceMinor, formatAmount } from '../report/money-format.ts';
import { describeNotFound } from '../report/run-report.ts';

/** `recon reconcile`'s lines on a terminal: the run, its counts per status, its lifecycle and its bridge. */
export function formatRunSummary(summary: RunSummary): string {
  const lines = [
    `run ${summary.runId} as of ${summary.asOf.toISOString()}: ${summary.description}, ${summary.ordersInScope} verdicts`,
  ];
  const counts = Object.entries(summary.counts).filter(([, n]) => n > 0);
  lines.push(`  ${counts.length === 0 ? 'no verdicts' : counts.map(([status, n]) => `${status}=${n}`).join(' ')}`);
  const { new: added, persisting, resolved } = summary.lifecycle;
  lines.push(`  exceptions: ${added} new, ${persisting} persisting; ${resolved} resolved`);
  lines.push(`  computed ${summary.verdictsComputed} verdicts, ${summary.verdictsChanged} changed`);
  for (const total of summary.totals) {
    const delta = differenceMinor(total.settledMinor, total.expectedMinor);
    lines.push(
      `  bridge ${total.currency}: ${total.orders} orders + ${total.unknownOrders} unknown, ` +
        `expected ${formatAmount(total.expectedMinor, total.currency)}, settled ${formatAmount(total.settledMinor, total.currency)}, ` +
        `delta ${formatAmount(delta, total.currency)}`,
    );
  }
  if (summary.notFoundCount > 0)
    lines.push(`  not found (no order, no succeeded transaction): ${describeNotFound(summary, 10)}`);
  return lines.join('\n');
}

/** The run as one JSON object; amounts stay strings of minor units. */
export function formatRunJson(summary: RunSummary): string {
  return JSON.stringify(runJson(summary));
}

export function runJson(summary: RunSummary): Record<string, unknown> {
  return { ...summary, asOf: summary.asOf.toISOString(), scope: scopeToJson(summary.scope) };
}
