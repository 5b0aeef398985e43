import type { PruneProgress } from '../retention/prune.ts';
import { formatBytes, plural, pruneReportJson, type PruneReport } from '../retention/prune-report.ts';

/**
 * `recon prune`'s lines: what each step removed (or would remove, with --dry-run), its cutoff and the variable that
 * set it.
 */
export function formatPruneSummary(report: PruneReport): string {
  const { deliveries, failedDeliveries, runs } = report;
  const would = (done: string) => (report.dryRun ? `would be ${done}` : done);
  const lines = report.dryRun ? ['dry run: nothing was removed'] : [];
  lines.push(
    `deliveries: ${deliveries.deliveries} ${would('pruned')} (${formatBytes(deliveries.bytes)} ${would('freed')}), ` +
      `ingested before ${deliveries.cutoff.toISOString()} (RECON_DELIVERY_RETENTION_DAYS=${deliveries.retentionDays})`,
    `failed deliveries: ${failedDeliveries.deliveries} ${would('pruned')} (${formatBytes(failedDeliveries.bytes)} ${would('freed')}), ` +
      `failed before ${failedDeliveries.cutoff.toISOString()} ` +
      `(RECON_FAILED_DELIVERY_RETENTION_DAYS=${failedDeliveries.retentionDays})`,
    `runs: ${runs.runs} ${would('removed')} (${plural(runs.verdictVersions, 'verdict version', 'verdict versions')}, ` +
      `${plural(runs.runTotals, 'run total', 'run totals')}, ${plural(runs.scopeOrders, 'scope order', 'scope orders')}), ` +
      `older than ${runs.cutoff.toISOString()} (RECON_RUN_RETENTION_DAYS=${runs.retentionDays})`,
  );
  return lines.join('\n');
}

/** `--json`: the report as one object. */
export function formatPruneJson(report: PruneReport): string {
  return JSON.stringify(pruneReportJson(report));
}

/** The progress line on a terminal, as the steps go. */
export function formatPruneProgress(progress: PruneProgress): string {
  switch (progress.step) {
    case 'deliveries':
      return `pruning delivered bytes: ${plural(progress.soFar.deliveries, 'delivery', 'deliveries')}, ${formatBytes(progress.soFar.bytes)}`;
    case 'failedDeliveries':
      return `pruning the bytes of failed deliveries: ${plural(progress.soFar.deliveries, 'delivery', 'deliveries')}, ${formatBytes(progress.soFar.bytes)}`;
    case 'runs':
      return `removing runs older than ${progress.cutoff.toISOString()}`;
  }
}
