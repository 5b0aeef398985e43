import type { DeliveriesPruned } from './prune-deliveries.ts';
import type { pruneRuns } from './prune-runs.ts';

export type RunsPruned = Awaited<ReturnType<typeof pruneRuns>>;

/** What a prune removed, or would remove in a dry run: each step with its retention and cutoff. */
export interface PruneReport {
  readonly dryRun: boolean;
  readonly deliveries: DeliveriesPruned & { readonly retentionDays: number; readonly cutoff: Date };
  readonly runs: RunsPruned & { readonly retentionDays: number; readonly cutoff: Date };
}

/**
 * The report as `recon prune --json` prints it and recon.prunes.removed keeps it: counts as numbers, cutoffs as ISO
 * 8601 instants.
 */
export function pruneReportJson(report: PruneReport): Record<string, unknown> {
  return {
    dryRun: report.dryRun,
    deliveries: { ...report.deliveries, cutoff: report.deliveries.cutoff.toISOString() },
    runs: { ...report.runs, cutoff: report.runs.cutoff.toISOString() },
  };
}

/** The report in one line, for a log record: `pruned the bytes of 12 deliveries (34.5 MB) and 0 runs`. */
export function summarizePrune(report: PruneReport): string {
  const deliveries = report.deliveries.deliveries;
  const runs = report.runs.runs;
  const verb = report.dryRun ? 'would prune' : 'pruned';
  return (
    `${verb} the bytes of ${plural(deliveries, 'delivery', 'deliveries')} (${formatBytes(report.deliveries.bytes)})` +
    ` and ${plural(runs, 'run', 'runs')}`
  );
}

/** Bytes for people: exact under a MiB, else MB to a tenth. */
export function formatBytes(bytes: number): string {
  return bytes < 1024 * 1024 ? `${bytes} bytes` : `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}

export function plural(count: number, one: string, many: string): string {
  return `${count} ${count === 1 ? one : many}`;
}
