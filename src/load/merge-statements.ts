import { sql, type Kysely, type RawBuilder } from 'kysely';
import type { Schema, TransactionsTable } from '../db/schema.ts';
import type { TransactionColumn } from '../normalize/transaction-row.ts';
import { STAGING_TABLE } from './staging-table.ts';

/**
 * The statements that move a file's staged rows into recon.transactions, built with Kysely on the transaction's
 * own connection. Two joins instead of an upsert: ON CONFLICT locks every row it meets before it can tell that
 * nothing changed, so a re-ingest of unchanged rows rewrote a million tuples' lock bits; a join reads them and
 * writes only what differs.
 *
 * - Only the columns this file's header carries are written and compared: an export that asked for fewer
 *   COLUMNS must not blank out what an earlier, wider export loaded. Unknown columns merge into `extra`.
 * - `updateChanged` first, against the rows as they were before this file; then `insertNew`, an anti-join, so
 *   that neither statement meets the other's rows. They rely on merges taking turns (`mergeStaged`'s lock):
 *   no other writer can add an id between the two.
 * - The source reads the staging table as it is when no id is staged twice, which is what an export is; when
 *   one is, the last staged row of each id wins, by entry order then line (`deduplicate`), at the cost of a sort.
 */
export interface MergeShape {
  /** The file's columns except transaction_id, in header order. */
  readonly columns: readonly TransactionColumn[];
  /** Whether the file has columns recon does not know, kept in `extra`. */
  readonly withExtra: boolean;
}

export interface MergeTarget {
  readonly fileId: string;
  /** The entries' names (null for a bare csv), indexed by entry_index. */
  readonly entryNames: readonly (string | null)[];
  /** The entries this statement takes: entries whose headers carry other columns get statements of their own. */
  readonly entryIndexes: readonly number[];
}

type StagedTransaction = Omit<TransactionsTable, 'extra' | 'file_id' | 'entry' | 'line' | 'updated_at'>;

/** recon_staging as Kysely sees it: see `createStagingTableSql`. */
export interface StagingTable extends StagedTransaction {
  entry_index: number;
  line: number;
  extra: string | null;
  reject_reason: string | null;
  raw: string | null;
}

type StagingSchema = Schema & { [STAGING_TABLE]: StagingTable };
type Db = Kysely<Schema>;

function staging(db: Db): Kysely<StagingSchema> {
  return db.withTables<{ [STAGING_TABLE]: StagingTable }>();
}

/** The accepted rows of the target's entries, each id once when `deduplicate`. */
function stagedSource(db: Db, { columns, withExtra }: MergeShape, { entryIndexes }: MergeTarget, deduplicate: boolean) {
  const selected = ['transaction_id', ...columns, ...(withExtra ? ['extra' as const] : []), 'entry_index', 'line'] as const;
  const accepted = staging(db)
    .selectFrom(STAGING_TABLE)
    .select(selected)
    .where('reject_reason', 'is', null)
    .where('entry_index', '=', sql<number>`ANY (${[...entryIndexes]}::integer[])`);
  return deduplicate
    ? accepted.distinctOn('transaction_id').orderBy('transaction_id').orderBy('entry_index', 'desc').orderBy('line', 'desc')
    : accepted;
}

const column = (table: 't' | 's', name: string) => sql.ref(`${table}.${name}`);

/** The lineage of a written row: this file, the zip entry the row came from, its line. */
function lineage({ fileId, entryNames }: MergeTarget) {
  return {
    file_id: sql<string>`${fileId}::bigint`,
    entry: sql<string | null>`(${[...entryNames]}::text[])[${column('s', 'entry_index')} + 1]`,
    line: sql<number>`${column('s', 'line')}`,
  };
}

/** A stored row differs from its staged one in a column the file carries, or gains a key of `extra`. */
function changed({ columns, withExtra }: MergeShape): RawBuilder<boolean> {
  const tests: RawBuilder<unknown>[] = [];
  if (columns.length > 0) {
    const row = (table: 't' | 's') => sql.join(columns.map((name) => column(table, name)));
    tests.push(sql`(${row('t')}) IS DISTINCT FROM (${row('s')})`);
  }
  if (withExtra) tests.push(sql`t.extra || coalesce(s.extra, '{}') <> t.extra`);
  return sql<boolean>`(${sql.join(tests, sql` OR `)})`;
}

/** Whether `updateChanged` can change anything: a file of bare transaction ids only ever inserts. */
export function canChangeStoredRows({ columns, withExtra }: MergeShape): boolean {
  return columns.length > 0 || withExtra;
}

/** Updates the stored rows the staged ones change; the number of rows updated. */
export async function updateChanged(db: Db, shape: MergeShape, target: MergeTarget, deduplicate: boolean): Promise<number> {
  const assignments: Record<string, RawBuilder<unknown>> = {};
  for (const name of shape.columns) assignments[name] = sql`${column('s', name)}`;
  if (shape.withExtra) assignments.extra = sql`t.extra || coalesce(s.extra, '{}')`;
  const result = await db
    .updateTable('recon.transactions as t')
    .from(stagedSource(db, shape, target, deduplicate).as('s'))
    .set({ ...assignments, ...lineage(target), updated_at: sql`now()` })
    .whereRef('t.transaction_id', '=', sql.ref('s.transaction_id'))
    .where(changed(shape))
    .executeTakeFirst();
  return Number(result.numUpdatedRows);
}

/** Inserts the staged rows whose transaction id is not stored yet; the number of rows inserted. */
export async function insertNew(db: Db, shape: MergeShape, target: MergeTarget, deduplicate: boolean): Promise<number> {
  const written: (TransactionColumn | 'extra')[] = ['transaction_id', ...shape.columns, ...(shape.withExtra ? ['extra' as const] : [])];
  const { file_id, entry, line } = lineage(target);
  const result = await db
    .insertInto('recon.transactions')
    .columns([...written, 'file_id' as const, 'entry' as const, 'line' as const])
    .expression(
      db
        .selectFrom(stagedSource(db, shape, target, deduplicate).as('s'))
        .select([
          ...written.map((name) => (name === 'extra' ? sql`coalesce(s.extra, '{}')` : column('s', name)).as(name)),
          file_id.as('file_id'),
          entry.as('entry'),
          line.as('line'),
        ])
        .where(({ not, exists, selectFrom }) =>
          not(exists(selectFrom('recon.transactions as t').whereRef('t.transaction_id', '=', sql.ref('s.transaction_id')))),
        ),
    )
    .executeTakeFirst();
  return Number(result.numInsertedOrUpdatedRows);
}

/**
 * How many accepted rows of the target's entries repeat an id staged before them (superseded rows): among the
 * `candidates` only when given, which must hold every id that may repeat (`RepeatedIdFilter`), else among all.
 */
export async function countRepeatedRows(db: Db, target: MergeTarget, candidates: readonly string[] | 'all'): Promise<number> {
  let perId = staging(db)
    .selectFrom(STAGING_TABLE)
    .select(({ fn }) => fn.countAll<string>().as('rows'))
    .where('reject_reason', 'is', null)
    .where('entry_index', '=', sql<number>`ANY (${[...target.entryIndexes]}::integer[])`)
    .groupBy('transaction_id');
  if (candidates !== 'all') perId = perId.where('transaction_id', '=', sql<string>`ANY (${[...candidates]}::text[])`);
  const { repeated } = await db
    .selectFrom(perId.as('per_id'))
    .select(sql<string>`coalesce(sum(per_id.rows - 1), 0)`.as('repeated'))
    .executeTakeFirstOrThrow();
  return Number(repeated);
}
