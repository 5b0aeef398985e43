import { sql, type Kysely, type RawBuilder } from 'kysely';
import type { Schema } from '../db/schema.ts';
import type { TransactionColumn } from '../normalize/transaction-row.ts';
import { SET_ASIDE_TABLE, STAGING_TABLE, withStaging, type StagingTables } from './staging-table.ts';

/**
 * The statements that move a file's staged rows into recon.transactions, built with Kysely on the transaction's
 * own connection. Two joins instead of an upsert: ON CONFLICT DO UPDATE locks every row it meets before it can tell
 * that nothing changed, so a re-ingest of unchanged rows rewrote a million tuples' lock bits; a join reads them and
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
  /**
   * The last merge of a file loaded in chunks: a stored row this file wrote already (an earlier chunk inserted its
   * id) is always rewritten by the id's later rows, so that its values and lineage are those of its last line.
   */
  readonly rewritesRowsOfThisFile?: boolean;
}

/** The ids of a merge's new or changed rows, for the merge of a file that is mostly loaded already. */
export const DELTA_TABLE = 'recon_delta';

type Db = Kysely<Schema>;

function staging(db: Db): Kysely<Schema & StagingTables & { [DELTA_TABLE]: { transaction_id: string } }> {
  return withStaging(db).withTables<{ [DELTA_TABLE]: { transaction_id: string } }>();
}

/** How a merge reads its staged rows: each id once when `deduplicate`; only the ids of DELTA_TABLE when `onlyDelta`. */
export interface SourceOptions {
  readonly deduplicate: boolean;
  readonly onlyDelta: boolean;
}

/** The accepted rows of the target's entries, as `options` say. */
function stagedSource(
  db: Db,
  { columns, withExtra }: MergeShape,
  { entryIndexes }: MergeTarget,
  options: SourceOptions,
) {
  const selected = [
    'transaction_id',
    ...columns,
    ...(withExtra ? ['extra' as const] : []),
    'row_digest',
    'entry_index',
    'line',
  ] as const;
  let accepted = staging(db)
    .selectFrom(STAGING_TABLE)
    .select(selected)
    .where('reject_reason', 'is', null)
    .where('entry_index', '=', sql<number>`ANY (${[...entryIndexes]}::integer[])`);
  if (options.onlyDelta)
    accepted = accepted.where('transaction_id', 'in', (eb) => eb.selectFrom(DELTA_TABLE).select('transaction_id'));
  return options.deduplicate
    ? accepted
        .distinctOn('transaction_id')
        .orderBy('transaction_id')
        .orderBy('entry_index', 'desc')
        .orderBy('line', 'desc')
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
function changed({ columns, withExtra }: MergeShape, target: MergeTarget): RawBuilder<boolean> {
  const tests: RawBuilder<unknown>[] = [];
  if (columns.length > 0) {
    const row = (table: 't' | 's') => sql.join(columns.map((name) => column(table, name)));
    tests.push(sql`(${row('t')}) IS DISTINCT FROM (${row('s')})`);
  }
  if (withExtra) tests.push(sql`t.extra || coalesce(s.extra, '{}') <> t.extra`);
  const differs = sql<boolean>`(t.row_digest IS DISTINCT FROM s.row_digest AND (${sql.join(tests, sql` OR `)}))`;
  return target.rewritesRowsOfThisFile ? sql<boolean>`(${writtenByThisFile(target)} OR ${differs})` : differs;
}

/** A stored row written by this file already: see `MergeTarget.rewritesRowsOfThisFile`. */
function writtenByThisFile({ fileId }: MergeTarget): RawBuilder<boolean> {
  return sql<boolean>`t.file_id = ${fileId}::bigint`;
}

/** Whether `updateChanged` can change anything: a file of bare transaction ids only ever inserts. */
export function canChangeStoredRows({ columns, withExtra }: MergeShape): boolean {
  return columns.length > 0 || withExtra;
}

/** Updates the stored rows the staged ones change; the number of rows updated. */
export async function updateChanged(
  db: Db,
  shape: MergeShape,
  target: MergeTarget,
  options: SourceOptions,
): Promise<number> {
  const assignments: Record<string, RawBuilder<unknown>> = {};
  for (const name of shape.columns) assignments[name] = sql`${column('s', name)}`;
  if (shape.withExtra) assignments.extra = sql`t.extra || coalesce(s.extra, '{}')`;
  const result = await db
    .updateTable('recon.transactions as t')
    .from(stagedSource(db, shape, target, options).as('s'))
    .set({ ...assignments, row_digest: sql`s.row_digest`, ...lineage(target), updated_at: sql`now()` })
    .whereRef('t.transaction_id', '=', sql.ref('s.transaction_id'))
    .where(changed(shape, target))
    .executeTakeFirst();
  return Number(result.numUpdatedRows);
}

/** Inserts the staged rows whose transaction id is not stored yet; the number of rows inserted. */
export async function insertNew(
  db: Db,
  shape: MergeShape,
  target: MergeTarget,
  options: SourceOptions,
): Promise<number> {
  const result = await insertNewQuery(db, shape, target, options, 'anti-join').executeTakeFirst();
  return Number(result.numInsertedOrUpdatedRows);
}

/**
 * The insert of staged rows whose id is not stored yet: by an anti-join; by the primary key's own check as each row
 * goes in (`on-conflict`), which joins nothing where the stored rows are many and the staged ones mostly new; or
 * not at all (`none`), for rows known to be new, where a stored id fails the statement.
 */
function insertNewQuery(
  db: Db,
  shape: MergeShape,
  target: MergeTarget,
  options: SourceOptions,
  skipStored: 'anti-join' | 'on-conflict' | 'none',
) {
  const written: (TransactionColumn | 'extra' | 'row_digest')[] = [
    'transaction_id',
    ...shape.columns,
    ...(shape.withExtra ? ['extra' as const] : []),
    'row_digest',
  ];
  const { file_id, entry, line } = lineage(target);
  const rows = db
    .selectFrom(stagedSource(db, shape, target, options).as('s'))
    .select([
      ...written.map((name) => (name === 'extra' ? sql`coalesce(s.extra, '{}')` : column('s', name)).as(name)),
      file_id.as('file_id'),
      entry.as('entry'),
      line.as('line'),
    ]);
  const insert = db
    .insertInto('recon.transactions')
    .columns([...written, 'file_id' as const, 'entry' as const, 'line' as const]);
  if (skipStored === 'none') return insert.expression(rows);
  if (skipStored === 'on-conflict')
    return insert.expression(rows).onConflict((conflict) => conflict.column('transaction_id').doNothing());
  return insert.expression(
    rows.where(({ not, exists, selectFrom }) =>
      not(exists(selectFrom('recon.transactions as t').whereRef('t.transaction_id', '=', sql.ref('s.transaction_id')))),
    ),
  );
}

/**
 * Inserts every staged row of the target (each id once when `deduplicate`) as a new row: for the chunk of a file
 * whose ids are all new, at the cost of the insert alone. An id stored already fails it with a unique violation.
 */
export async function insertAllStaged(
  db: Db,
  shape: MergeShape,
  target: MergeTarget,
  deduplicate: boolean,
): Promise<number> {
  const result = await insertNewQuery(db, shape, target, { deduplicate, onlyDelta: false }, 'none').executeTakeFirst();
  return Number(result.numInsertedOrUpdatedRows);
}

/**
 * One chunk of a file loaded in chunks (merge-chunk.ts): inserts the staged rows of ids not stored yet, as
 * `insertNew` does, and moves every other accepted row (an id stored before this chunk, by an earlier file or an
 * earlier chunk of this one) to SET_ASIDE_TABLE, where the file's last merge compares them as it would the rows of a
 * whole file. One statement: the insert skips stored ids by its primary key's check (an anti-join hashed every
 * stored id again for each chunk, and probing the index first checked each id twice), and the rows set aside are
 * those whose id it did not return.
 */
export async function insertNewSettingAsideStored(
  db: Db,
  shape: MergeShape,
  target: MergeTarget,
  deduplicate: boolean,
): Promise<{ inserted: number; setAside: number }> {
  const temp = staging(db);
  const { inserted, set_aside } = await temp
    .with('inserted', () =>
      insertNewQuery(db, shape, target, { deduplicate, onlyDelta: false }, 'on-conflict').returning('transaction_id'),
    )
    .with('set_aside', (qb) =>
      qb
        .insertInto(SET_ASIDE_TABLE)
        .expression(
          qb
            .selectFrom(STAGING_TABLE)
            .selectAll()
            .where('reject_reason', 'is', null)
            .where('entry_index', '=', sql<number>`ANY (${[...target.entryIndexes]}::integer[])`)
            .where(({ not, exists, selectFrom }) =>
              not(
                exists(
                  selectFrom('inserted')
                    .select(sql`1`.as('one'))
                    .whereRef('inserted.transaction_id', '=', `${STAGING_TABLE}.transaction_id`),
                ),
              ),
            ),
        )
        .returning('line'),
    )
    .selectNoFrom((eb) => [
      eb.selectFrom('inserted').select(eb.fn.countAll<string>().as('n')).as('inserted'),
      eb.selectFrom('set_aside').select(eb.fn.countAll<string>().as('n')).as('set_aside'),
    ])
    .executeTakeFirstOrThrow();
  return { inserted: Number(inserted), setAside: Number(set_aside) };
}

/**
 * How many distinct ids among the target's accepted staged rows this file has written already (an earlier chunk
 * inserted them): among the `candidates` when given, which then hold every id staged in two chunks.
 */
export async function countRowsWrittenByThisFile(
  db: Db,
  target: MergeTarget,
  candidates: readonly string[] | 'all',
): Promise<number> {
  let ids = staging(db)
    .selectFrom(STAGING_TABLE)
    .select('transaction_id')
    .where('reject_reason', 'is', null)
    .where('entry_index', '=', sql<number>`ANY (${[...target.entryIndexes]}::integer[])`);
  if (candidates !== 'all') ids = ids.where('transaction_id', '=', sql<string>`ANY (${[...candidates]}::text[])`);
  const { written } = await db
    .selectFrom('recon.transactions as t')
    .select((eb) => eb.fn.countAll<string>().as('written'))
    .where(writtenByThisFile(target))
    .where('t.transaction_id', 'in', ids)
    .executeTakeFirstOrThrow();
  return Number(written);
}

/**
 * How many accepted rows of the target's entries repeat an id staged before them (superseded rows): among the
 * `candidates` only when given, which must hold every id that may repeat (`RepeatedIdFilter`), else among all.
 */
export async function countRepeatedRows(
  db: Db,
  target: MergeTarget,
  candidates: readonly string[] | 'all',
): Promise<number> {
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
export async function sampleStoredShare(
  db: Db,
  target: MergeTarget,
  size: number,
): Promise<{ sampled: number; stored: number }> {
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
      fn
        .countAll<string>()
        .filterWhere(
          exists(selectFrom('recon.transactions as t').whereRef('t.transaction_id', '=', sql.ref('s.transaction_id'))),
        )
        .as('stored'),
    ])
    .executeTakeFirstOrThrow();
  return { sampled: Number(sampled), stored: Number(stored) };
}

/**
 * Fills DELTA_TABLE, a temporary table of this transaction, with the ids of the target's staged rows that are new
 * or may change their stored row: one join over the staged rows, after which the update and the insert read only
 * these. The join reads ids and digests alone, which keeps its hash table narrow and in memory; a row whose digest
 * differs is compared column by column by the update.
 */
export async function collectDelta(
  db: Db,
  shape: MergeShape,
  target: MergeTarget,
  deduplicate: boolean,
): Promise<void> {
  const source = stagedSource(db, shape, target, { deduplicate, onlyDelta: false });
  const digestDiffers = canChangeStoredRows(shape)
    ? sql<boolean>`t.row_digest IS DISTINCT FROM s.row_digest`
    : sql<boolean>`false`;
  const differs = target.rewritesRowsOfThisFile
    ? sql<boolean>`(${writtenByThisFile(target)} OR ${digestDiffers})`
    : digestDiffers;
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
