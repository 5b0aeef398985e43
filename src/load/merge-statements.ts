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
 * - A stored row whose digest equals the staged one's is unchanged without comparing its columns (migration 0011).
 * - When most of a file is loaded already (a nightly window overlapping the last), `collectDelta` first finds the
 *   few ids that are new or changed in one join, and the update and the insert then read those alone
 *   (`onlyDelta`) instead of joining every staged row to recon.transactions twice.
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

/** The ids of a merge's new or changed rows, for the merge of a file that is mostly loaded already. */
export const DELTA_TABLE = 'recon_delta';

type StagingSchema = Schema & { [STAGING_TABLE]: StagingTable; [DELTA_TABLE]: { transaction_id: string } };
type Db = Kysely<Schema>;

function staging(db: Db): Kysely<StagingSchema> {
  return db.withTables<{ [STAGING_TABLE]: StagingTable; [DELTA_TABLE]: { transaction_id: string } }>();
}

/** How a merge reads its staged rows: each id once when `deduplicate`; only the ids of DELTA_TABLE when `onlyDelta`. */
export interface SourceOptions {
  readonly deduplicate: boolean;
  readonly onlyDelta: boolean;
}

/** The accepted rows of the target's entries, as `options` say. */
function stagedSource(db: Db, { columns, withExtra }: MergeShape, { entryIndexes }: MergeTarget, options: SourceOptions) {
  const selected = ['transaction_id', ...columns, ...(withExtra ? ['extra' as const] : []), 'row_digest', 'entry_index', 'line'] as const;
  let accepted = staging(db)
    .selectFrom(STAGING_TABLE)
    .select(selected)
    .where('reject_reason', 'is', null)
    .where('entry_index', '=', sql<number>`ANY (${[...entryIndexes]}::integer[])`);
  if (options.onlyDelta) accepted = accepted.where('transaction_id', 'in', (eb) => eb.selectFrom(DELTA_TABLE).select('transaction_id'));
  return options.deduplicate
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

/**
 * A stored row differs from its staged one in a column the file carries, or gains a key of `extra`. Equal digests
 * answer first: the same content wrote the stored row, and twenty comparisons are skipped.
 */
function changed({ columns, withExtra }: MergeShape): RawBuilder<boolean> {
  const tests: RawBuilder<unknown>[] = [];
  if (columns.length > 0) {
    const row = (table: 't' | 's') => sql.join(columns.map((name) => column(table, name)));
    tests.push(sql`(${row('t')}) IS DISTINCT FROM (${row('s')})`);
  }
  if (withExtra) tests.push(sql`t.extra || coalesce(s.extra, '{}') <> t.extra`);
  return sql<boolean>`(t.row_digest IS DISTINCT FROM s.row_digest AND (${sql.join(tests, sql` OR `)}))`;
}

/** Whether `updateChanged` can change anything: a file of bare transaction ids only ever inserts. */
export function canChangeStoredRows({ columns, withExtra }: MergeShape): boolean {
  return columns.length > 0 || withExtra;
}

/** Updates the stored rows the staged ones change; the number of rows updated. */
export async function updateChanged(db: Db, shape: MergeShape, target: MergeTarget, options: SourceOptions): Promise<number> {
  const assignments: Record<string, RawBuilder<unknown>> = {};
  for (const name of shape.columns) assignments[name] = sql`${column('s', name)}`;
  if (shape.withExtra) assignments.extra = sql`t.extra || coalesce(s.extra, '{}')`;
  const result = await db
    .updateTable('recon.transactions as t')
    .from(stagedSource(db, shape, target, options).as('s'))
    .set({ ...assignments, row_digest: sql`s.row_digest`, ...lineage(target), updated_at: sql`now()` })
    .whereRef('t.transaction_id', '=', sql.ref('s.transaction_id'))
    .where(changed(shape))
    .executeTakeFirst();
  return Number(result.numUpdatedRows);
}

/** Inserts the staged rows whose transaction id is not stored yet; the number of rows inserted. */
export async function insertNew(db: Db, shape: MergeShape, target: MergeTarget, options: SourceOptions): Promise<number> {
  const written: (TransactionColumn | 'extra' | 'row_digest')[] = [
    'transaction_id', ...shape.columns, ...(shape.withExtra ? ['extra' as const] : []), 'row_digest',
  ];
  const { file_id, entry, line } = lineage(target);
  const result = await db
    .insertInto('recon.transactions')
    .columns([...written, 'file_id' as const, 'entry' as const, 'line' as const])
    .expression(
      db
        .selectFrom(stagedSource(db, shape, target, options).as('s'))
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

/**
 * How many of the first `size` accepted rows of the target's entries are stored already, out of how many looked at:
 * one index probe each, a few milliseconds, to choose between the merges of a mostly new and a mostly loaded file.
 */
export async function sampleStoredShare(db: Db, target: MergeTarget, size: number): Promise<{ sampled: number; stored: number }> {
  const sample = staging(db)
    .selectFrom(STAGING_TABLE)
    .select('transaction_id')
    .where('reject_reason', 'is', null)
    .where('entry_index', '=', sql<number>`ANY (${[...target.entryIndexes]}::integer[])`)
    .limit(size);
  const { sampled, stored } = await db
    .selectFrom(sample.as('s'))
    .select(({ fn, exists, selectFrom }) => [
      fn.countAll<string>().as('sampled'),
      fn.countAll<string>().filterWhere(exists(selectFrom('recon.transactions as t').whereRef('t.transaction_id', '=', sql.ref('s.transaction_id')))).as('stored'),
    ])
    .executeTakeFirstOrThrow();
  return { sampled: Number(sampled), stored: Number(stored) };
}

/**
 * Fills DELTA_TABLE, a temporary table of this transaction, with the ids of the target's staged rows that are new
 * or may change their stored row: one join over the staged rows, after which the update and the insert read only
 * these. The join reads ids and digests alone, which keeps its hash table narrow (the whole rows made it 112 MB and
 * the statement five times slower); a row whose digest differs is compared column by column by the update.
 */
export async function collectDelta(db: Db, shape: MergeShape, target: MergeTarget, deduplicate: boolean): Promise<void> {
  const source = stagedSource(db, shape, target, { deduplicate, onlyDelta: false });
  const differs = canChangeStoredRows(shape) ? sql<boolean>`t.row_digest IS DISTINCT FROM s.row_digest` : sql<boolean>`false`;
  await sql`DROP TABLE IF EXISTS ${sql.table(DELTA_TABLE)}`.execute(db);
  await db.schema
    .createTable(DELTA_TABLE)
    .temporary()
    .onCommit('drop')
    .as(
      staging(db)
        .selectFrom(source.as('s'))
        .leftJoin('recon.transactions as t', 't.transaction_id', 's.transaction_id')
        .select('s.transaction_id')
        .where((eb) => eb.or([eb('t.transaction_id', 'is', null), differs])),
    )
    .execute();
}
