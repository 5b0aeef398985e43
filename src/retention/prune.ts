import type { Kysely } from 'kysely';
import type { RetentionConfig } from '../config/config.ts';
import type { Schema } from '../db/schema.ts';
import { pruneDeliveryBytes, type DeliveriesPruned } from './prune-deliveries.ts';
import type { PruneReport } from './prune-report.ts';
import { pruneRuns } from './prune-runs.ts';

/** The step that removes old reconciliation runs (prune-runs.ts), injected so that tests can stand in for it. */
export type PruneRunsStep = typeof pruneRuns;

export interface PruneOptions {
  readonly retention: RetentionConfig;
  /** The instant both retentions count back from. */
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
  { readonly step: 'deliveries'; readonly soFar: DeliveriesPruned } | { readonly step: 'runs'; readonly cutoff: Date };

/** Deliveries (or runs) per transaction: a batch holds its locks for moments, beside a nightly run or an ingest. */
const DEFAULT_PRUNE_BATCH_SIZE = 100;

const DAY_MS = 86_400_000;

/**
 * Removes what retention lets go, step after step: the delivered bytes of files ingested more than
 * RECON_DELIVERY_RETENTION_DAYS ago, then the reconciliation runs older than RECON_RUN_RETENTION_DAYS. Each step
 * works in batches that commit on their own, so a prune cut short keeps what it did and the next one carries on.
 */
export async function prune(
  db: Kysely<Schema>,
  options: PruneOptions,
  steps: { readonly pruneRuns: PruneRunsStep } = { pruneRuns },
): Promise<PruneReport> {
  const batchSize = options.batchSize ?? DEFAULT_PRUNE_BATCH_SIZE;
  const { deliveryDays, runDays } = options.retention;
  const deliveryCutoff = new Date(options.now.getTime() - deliveryDays * DAY_MS);
  const deliveries = await pruneDeliveryBytes(db, {
    cutoff: deliveryCutoff,
    now: options.now,
    dryRun: options.dryRun,
    batchSize,
    signal: options.signal,
    onBatch: (soFar) => options.onProgress?.({ step: 'deliveries', soFar }),
  });
  options.signal?.throwIfAborted();
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
    deliveries: { retentionDays: deliveryDays, cutoff: deliveryCutoff, ...deliveries },
    runs: { retentionDays: runDays, cutoff: runCutoff, ...runs },
  };
}
