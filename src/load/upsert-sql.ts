import type { TransactionColumn } from '../normalize/transaction-row.ts';
import { STAGING_TABLE } from './staging-table.ts';

/**
 * The one set-based statement that moves a file's staged rows into recon.transactions.
 *
 * - Only the columns this file's header carries are written and compared: an export that asked for fewer
 *   COLUMNS must not blank out what an earlier, wider export loaded. Unknown columns merge into `extra`.
 * - A row whose present values are all equal is left alone (no new tuple, no lineage change), so a
 *   re-ingest of the same data writes nothing; `xmax = 0` in RETURNING tells an insert from an update.
 * - Two forms. `direct` reads the staging table as it is: the export lists each transaction once, and
 *   skipping the sort that deduplication needs saves about a quarter of the statement on a million rows.
 *   Should an id be staged twice after all, PostgreSQL refuses the direct form (SQLSTATE 21000, a row
 *   affected twice) and the caller runs `deduplicating`: the last staged row wins, by entry order then line,
 *   and the earlier ones are counted as superseded.
 *
 * Parameters: $1 file_id, $2 the entries' names (text[], null for a bare csv), indexed by entry_index,
 * $3 the entry indexes this statement takes (entries whose headers carry other columns get their own).
 * The result is one row: inserted, updated and, for the deduplicating form, distinct_rows (integers).
 */
export interface UpsertShape {
  /** The file's columns except transaction_id, in header order. */
  readonly columns: readonly TransactionColumn[];
  /** Whether the file has columns recon does not know, kept in `extra`. */
  readonly withExtra: boolean;
}

export type UpsertForm = 'direct' | 'deduplicating';

export interface UpsertCounts {
  inserted: number;
  updated: number;
  /** Deduplicating form only: the distinct transaction ids it read. */
  distinct_rows?: number;
}

/** SQLSTATE of "ON CONFLICT DO UPDATE command cannot affect row a second time": an id staged twice. */
export const ROW_AFFECTED_TWICE = '21000';

/** The accepted rows the direct form reads; without duplicates, also the number of distinct ids. */
export const COUNT_STAGED_ROWS_SQL = `SELECT count(*)::integer AS staged_rows FROM ${STAGING_TABLE}
WHERE reject_reason IS NULL AND entry_index = ANY ($1::integer[])`;

/**
 * Whether the direct form can be tried at all: DO NOTHING (a file of bare ids) skips a repeated id
 * silently instead of refusing it, which would leave the count of distinct ids wrong.
 */
export function canUpsertDirectly({ columns, withExtra }: UpsertShape): boolean {
  return columns.length > 0 || withExtra;
}

export function buildUpsertSql({ columns, withExtra }: UpsertShape, form: UpsertForm): string {
  const valueColumns = [...columns, ...(withExtra ? ['extra'] : [])];
  const insertColumns = ['transaction_id', ...valueColumns, 'file_id', 'entry', 'line'];
  const selectList = ['transaction_id', ...columns, ...(withExtra ? ["coalesce(extra, '{}')"] : []), '$1', '($2::text[])[entry_index + 1]', 'line'];
  const acceptedRows = `WHERE reject_reason IS NULL AND entry_index = ANY ($3::integer[])`;
  const written = `INSERT INTO recon.transactions AS t (${insertColumns.join(', ')})
  SELECT ${selectList.join(', ')}
  FROM ${form === 'direct' ? `${STAGING_TABLE}
  ${acceptedRows}` : 'latest'}
  ON CONFLICT (transaction_id) ${onConflict(columns, withExtra)}
  RETURNING t.xmax = 0 AS inserted`;
  const counts = `(count(*) FILTER (WHERE inserted))::integer AS inserted,
  (count(*) FILTER (WHERE NOT inserted))::integer AS updated
FROM written`;

  if (form === 'direct') return `WITH written AS (
  ${written}
)
SELECT ${counts}`;
  const latestColumns = ['transaction_id', ...valueColumns, 'entry_index', 'line'];
  return `WITH latest AS (
  SELECT DISTINCT ON (transaction_id) ${latestColumns.join(', ')}
  FROM ${STAGING_TABLE}
  ${acceptedRows}
  ORDER BY transaction_id, entry_index DESC, line DESC
), written AS (
  ${written}
)
SELECT (SELECT count(*) FROM latest)::integer AS distinct_rows,
  ${counts}`;
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
