import type { TransactionColumn } from '../normalize/transaction-row.ts';
import { STAGING_TABLE } from './staging-table.ts';

/**
 * The one set-based statement that moves a file's staged rows into recon.transactions.
 *
 * - A transaction id staged twice (twice in one file, or in two zip entries): the last one wins, by
 *   entry order then line; the earlier ones are counted as superseded, not loaded.
 * - Only the columns this file's header carries are written and compared: an export that asked for fewer
 *   COLUMNS must not blank out what an earlier, wider export loaded. Unknown columns merge into `extra`.
 * - A row whose present values are all equal is left alone (no new tuple, no lineage change), so a
 *   re-ingest of the same data writes nothing; `xmax = 0` in RETURNING tells an insert from an update.
 *
 * Parameters: $1 file_id, $2 the entries' names (text[], null for a bare csv), indexed by entry_index,
 * $3 the entry indexes this statement takes (entries whose headers carry other columns get their own).
 * The result is one row: distinct_rows, inserted, updated (integers).
 */
export interface UpsertShape {
  /** The file's columns except transaction_id, in header order. */
  readonly columns: readonly TransactionColumn[];
  /** Whether the file has columns recon does not know, kept in `extra`. */
  readonly withExtra: boolean;
}

export interface UpsertCounts {
  distinct_rows: number;
  inserted: number;
  updated: number;
}

export function buildUpsertSql({ columns, withExtra }: UpsertShape): string {
  const valueColumns = [...columns, ...(withExtra ? ['extra'] : [])];
  const latestColumns = ['transaction_id', ...valueColumns, 'entry_index', 'line'];
  const insertColumns = ['transaction_id', ...valueColumns, 'file_id', 'entry', 'line'];
  const selectList = ['transaction_id', ...columns, ...(withExtra ? ["coalesce(extra, '{}')"] : []), '$1', '($2::text[])[entry_index + 1]', 'line'];

  return `WITH latest AS (
  SELECT DISTINCT ON (transaction_id) ${latestColumns.join(', ')}
  FROM ${STAGING_TABLE}
  WHERE reject_reason IS NULL AND entry_index = ANY ($3::integer[])
  ORDER BY transaction_id, entry_index DESC, line DESC
), written AS (
  INSERT INTO recon.transactions AS t (${insertColumns.join(', ')})
  SELECT ${selectList.join(', ')}
  FROM latest
  ON CONFLICT (transaction_id) ${onConflict(columns, withExtra)}
  RETURNING t.xmax = 0 AS inserted
)
SELECT (SELECT count(*) FROM latest)::integer AS distinct_rows,
  (count(*) FILTER (WHERE inserted))::integer AS inserted,
  (count(*) FILTER (WHERE NOT inserted))::integer AS updated
FROM written`;
}

function onConflict(columns: readonly TransactionColumn[], withExtra: boolean): string {
  if (columns.length === 0 && !withExtra) return 'DO NOTHING';
  const assignments = columns.map((column) => `${column} = excluded.${column}`);
  const changes: string[] = [];
  if (columns.length > 0) {
    const row = (alias: string) => `(${columns.map((column) => `${alias}.${column}`).join(', ')})`;
    changes.push(`${row('t')} IS DISTINCT FROM ${row('excluded')}`);
  }
  if (withExtra) {
    assignments.push('extra = t.extra || excluded.extra');
    changes.push('t.extra || excluded.extra <> t.extra');
  }
  assignments.push('file_id = excluded.file_id', 'entry = excluded.entry', 'line = excluded.line', 'updated_at = now()');
  return `DO UPDATE SET ${assignments.join(', ')}
  WHERE ${changes.join(' OR ')}`;
}
