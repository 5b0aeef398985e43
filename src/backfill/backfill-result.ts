import type { DuplicateFile, LoadedFile } from '../ingest/file-result.ts';
import type { CurrentVerdict } from '../reconcile/current-verdicts.ts';
import type { RunSummary } from '../reconcile/reconcile.ts';

/** What a backfill did: its requests to the service, the run that judged the orders, and their verdicts. */
export interface BackfillResult {
  readonly requests: readonly BackfillRequest[];
  readonly run: RunSummary;
  /** In the order the ids were given; an id in `run.notFound` has none. */
  readonly verdicts: readonly BackfillVerdict[];
}

/** One getTransactions request, loaded or recognised as loaded before: `file` is the name of its recon.files row. */
export type BackfillRequest = (LoadedFile | DuplicateFile) & {
  readonly orderIds: readonly string[];
  /** The account that signed the request (a group's first account for the whole group). */
  readonly identifier: string;
};

export interface BackfillVerdict extends CurrentVerdict {
  /** Set when the order's lack of transactions may only be the export's lag: see export-lag.ts. */
  readonly lagNote: string | null;
}
