import type { Kysely } from 'kysely';
import type { Schema } from '../db/schema.ts';

/**
 * Removes the reconciliation runs that started before `cutoff`, with the history only they need, in transactions of
 * at most `batchSize` runs; with `dryRun`, counts what it would remove and changes nothing. The second step of
 * prune.ts, after the delivered bytes.
 */
// TODO(history): removes nothing yet; the verdict-history storage brings the real step, which keeps every order's
// current verdict and the first-seen date of a persisting exception.
export async function pruneRuns(
  _db: Kysely<Schema>,
  _options: { cutoff: Date; dryRun: boolean; batchSize: number; signal?: AbortSignal },
): Promise<{ runs: number; verdictVersions: number; runTotals: number; scopeOrders: number }> {
  return { runs: 0, verdictVersions: 0, runTotals: 0, scopeOrders: 0 };
}
