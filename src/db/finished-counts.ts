import { sql } from 'kysely';

/** What a load of rows counts, as recon.files and recon.order_imports both record it. */
export interface LoadCounts {
  readonly rows: number;
  readonly inserted: number;
  readonly updated: number;
  readonly unchanged: number;
  readonly rejected: number;
}

/** The columns that close a loaded file's or import's row: its counts, and when it finished. */
export function finishedCounts(counts: LoadCounts) {
  return {
    rows_total: counts.rows,
    rows_inserted: counts.inserted,
    rows_updated: counts.updated,
    rows_unchanged: counts.unchanged,
    rows_rejected: counts.rejected,
    finished_at: sql<Date>`now()`,
  };
}
