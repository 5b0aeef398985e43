import type { DeliveriesPruned } from './prune-deliveries.ts';
import type { pruneRuns } from './prune-runs.ts';

export type RunsPruned = Awaited<ReturnType<typeof pruneRuns>>;

type BytesPruned = DeliveriesPruned & { readonly retentionDays: number; readonly cutoff: Date };

/** What a prune removed, or would remove in a dry run: each step with its retention and cutoff. */
export interface PruneReport {
  readonly dryRun: boolean;
  /** The bytes of ingested deliveries (RECON_DELIVERY_RETENTION_DAYS). */
  readonly deliveries: BytesPruned;
  /** The bytes of failed deliveries, quarantined or not (RECON_FAILED_DELIVERY_RETENTION_DAYS). */
  readonly failedDeliveries: BytesPruned;
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
    failedDeliveries: { ...report.failedDeliveries, cutoff: report.failedDeliveries.cutoff.toISOString() },
    runs: { ...report.runs, cutoff: report.runs.cutoff.toISOString() },
  };
}

/**
 * The report in one line, for a log record:
 * `pruned the bytes of 12 deliveries (34.5 MB) and of 3 failed deliveries (1.2 MB), and 0 runs`.
 */
export function summarizePrune(report: PruneReport): string {
  const { deliveries, failedDeliveries } = report;
  const verb = report.dryRun ? 'would prune' : 'pruned';
  return (
    `${verb} the bytes of ${plural(deliveries.deliveries, 'delivery', 'deliveries')} (${formatBytes(deliveries.bytes)})` +
    ` and of ${plural(failedDeliveries.deliveries, 'failed delivery', 'failed deliveries')} (${formatBytes(failedDeliveries.bytes)}),` +
    ` and ${plural(report.runs.runs, 'run', 'runs')}`
  );
}

/** Bytes for people: exact under a MiB, else MB to a tenth. */
export function formatBytes(bytes: number): string {
  return bytes < 1024 * 1024 ? `${bytes} bytes` : `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}

export function plural(count: number, one: string, many: string): string {
  return `${count} ${count === 1 ? one : many}`;
}
