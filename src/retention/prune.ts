import type { Kysely } from 'kysely';
import type { RetentionConfig } from '../config/config.ts';
import type { Schema } from '../db/schema.ts';
import { pruneDeliveryBytes, type DeliveriesPruned, type DeliveriesToPrune } from './prune-deliveries.ts';
import type { PruneReport } from './prune-report.ts';
import { pruneRuns } from './prune-runs.ts';

/** The step that removes old reconciliation runs (prune-runs.ts), injected so that tests can stand in for it. */
export type PruneRunsStep = typeof pruneRuns;

export interface PruneOptions {
  readonly retention: RetentionConfig;
  /** The instant every retention counts back from. */
  readonly now: Date;
  /** Count what would be removed; change nothing. */
  readonly dryRun: boolean;
  /** Deliveries, and runs, per transaction. */
  readonly batchSize?: number;
  /** Checked between batches: what committed before it stays removed. */
  readonly signal?: AbortSignal;
  /** Told as the steps go, for a progress line. */
  readonly onProgress?: (progress: PruneProgress) => void;
}

export type PruneProgress =
  | { readonly step: 'deliveries' | 'failedDeliveries'; readonly soFar: DeliveriesPruned }
  | { readonly step: 'runs'; readonly cutoff: Date };

/** Deliveries (or runs) per transaction: a batch holds its locks for moments, beside a nightly run or an ingest. */
const DEFAULT_PRUNE_BATCH_SIZE = 100;

const DAY_MS = 86_400_000;

/**
 * Removes what retention lets go, step after step: the delivered bytes of files ingested more than
 * RECON_DELIVERY_RETENTION_DAYS ago, those of deliveries that failed more than RECON_FAILED_DELIVERY_RETENTION_DAYS
 * ago, then the reconciliation runs older than RECON_RUN_RETENTION_DAYS. Each step works in batches that commit on
 * their own, so a prune cut short keeps what it did and the next one carries on.
 */
export async function prune(
  db: Kysely<Schema>,
  options: PruneOptions,
  steps: { readonly pruneRuns: PruneRunsStep } = { pruneRuns },
): Promise<PruneReport> {
  const batchSize = options.batchSize ?? DEFAULT_PRUNE_BATCH_SIZE;
  const { deliveryDays, failedDeliveryDays, runDays } = options.retention;
  const pruneBytes = async (which: DeliveriesToPrune, retentionDays: number) => {
    const cutoff = new Date(options.now.getTime() - retentionDays * DAY_MS);
    const step = which === 'failed' ? 'failedDeliveries' : 'deliveries';
    const pruned = await pruneDeliveryBytes(db, {
      which,
      cutoff,
      now: options.now,
      dryRun: options.dryRun,
      batchSize,
      signal: options.signal,
      onBatch: (soFar) => options.onProgress?.({ step, soFar }),
    });
    options.signal?.throwIfAborted();
    return { retentionDays, cutoff, ...pruned };
  };
  const deliveries = await pruneBytes('ingested', deliveryDays);
  const failedDeliveries = await pruneBytes('failed', failedDeliveryDays);
  const runCutoff = new Date(options.now.getTime() - runDays * DAY_MS);
  options.onProgress?.({ step: 'runs', cutoff: runCutoff });
  const runs = await steps.pruneRuns(db, {
    cutoff: runCutoff,
    dryRun: options.dryRun,
    batchSize,
    signal: options.signal,
  });
  return {
    dryRun: options.dryRun,
    deliveries,
    failedDeliveries,
    runs: { retentionDays: runDays, cutoff: runCutoff, ...runs },
  };
}
