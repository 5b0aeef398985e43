import { Readable } from 'node:stream';
import { sql } from 'kysely';
import type { Connection } from '../db/database.ts';
import type { TransactionColumn } from '../normalize/transaction-row.ts';
import {
  canChangeStoredRows,
  collectDelta,
  countRowsWrittenByThisFile,
  countRepeatedRows,
  insertNew,
  sampleStoredShare,
  updateChanged,
  type MergeShape,
  type MergeTarget,
} from './merge-statements.ts';
import { analyzeStaged, planBulkJoins } from './bulk-plans.ts';
import { moveRejectedRows } from './rejected-rows.ts';
import { createRepeatedIdFilter, type RepeatedIdFilter } from './repeated-id-filter.ts';
import { createStagingTable, SET_ASIDE_TABLE, STAGING_TABLE, stagingCopySql, withStaging } from './staging-table.ts';
import { dropOutdatedRows } from './outdated-rows.ts';
import { rejectRowsOfOtherAccounts, type StoredAccountGuard } from './stored-accounts.ts';

/**
 * One file's rows on their way into recon.transactions, inside the caller's transaction:
 * `beginStaging` creates the staging table, `stageEntry` COPYs each csv entry into it, `mergeStaged` moves the
 * rejected rows and merges the accepted ones. Nothing here commits; the caller's rollback undoes it all.
 */
export interface StagedEntry {
  /** The zip entry's name; null for a gzip, bzip2 or plain csv file. */
  readonly name: string | null;
  /** The entry's columns except transaction_id, in header order. */
  readonly columns: readonly TransactionColumn[];
  readonly withExtra: boolean;
}

/** What the encoders note of the accepted rows as they stage them, for the merge to plan by. */
export interface StagedRows {
  readonly ids: RepeatedIdFilter;
  /** Accepted rows encoded, by entry index (staged, or COPYed straight into the table when the file loads in chunks). */
  readonly acceptedByEntry: number[];
}

/** What the chunks merged so far leave to the file's last merge (merge-chunk.ts), for its last merge. */
export interface ChunksMerged {
  /** Rows inserted by the chunks so far, merged or COPYed straight into the table: each a new id, counted once. */
  readonly inserted: number;
  /** Rows of ids stored before their chunk, set aside in SET_ASIDE_TABLE for the last merge. */
  readonly setAside: number;
  /** The staging table holds rows of this entry and later ones only: it is emptied after each chunk's merge. */
  readonly firstEntryStaged: number;
}

export interface MergeCounts {
  /** Distinct transaction ids among the accepted rows. */
  readonly distinct: number;
  readonly inserted: number;
  readonly updated: number;
  readonly unchanged: number;
  /** Rows the normalizer accepted and the merge rejected: rows of another account's stored transactions. */
  readonly rejected: number;
  /** Rows of transactions a file asked for later wrote already (outdated-rows.ts): left as they are. */
  readonly outdated: number;
}

/** The transaction columns an entry's COPY stream carries, in order. */
export function stagedColumns(entry: StagedEntry): TransactionColumn[] {
  return ['transaction_id', ...entry.columns];
}

export async function beginStaging(connection: Connection): Promise<StagedRows> {
  await createStagingTable(connection.db);
  return { ids: createRepeatedIdFilter(), acceptedByEntry: [] };
}

/**
 * `copyText`: COPY text lines made by a `StagingRowEncoder` built for this entry's index and columns, a batch
 * of rows per string. As a byte stream, each batch becomes one Buffer as soon as it is made and at most about
 * one waits for the database: an object-mode stream would queue 16 batches, each still a rope of tens of
 * thousands of small strings, which is most of the heap of a large load.
 */
export async function stageEntry(
  connection: Connection,
  entry: StagedEntry,
  copyText: Iterable<string | Buffer> | AsyncIterable<string | Buffer>,
): Promise<void> {
  await connection.copyFrom(
    stagingCopySql(stagedColumns(entry), entry.withExtra),
    Readable.from(copyText, { objectMode: false }),
  );
}

/**
 * Merges take turns, each until its file's transaction ends: two loads of overlapping files at once would each
 * lock, row by row in its file's order, an id the other needs next, and one would die in a deadlock. Reading,
 * decompressing and COPY into staging still run side by side; only the merge waits. (Writing in id order instead
 * also avoids the deadlock, but sorting a million staged rows costs more than the wait.)
 */
export const MERGE_LOCK = 0x7265636f6e6d; // "reconm"

/** Waits for this load's turn to merge; held until its transaction ends (a second call in it returns at once). */
export async function takeMergeTurn(connection: Connection): Promise<void> {
  await sql`SELECT pg_advisory_xact_lock(${MERGE_LOCK})`.execute(connection.db);
}

/**
 * The file's last merge: all its staged rows when it loaded whole; else the last chunk's with the rows earlier chunks
 * set aside (`chunks`, what merge-chunk.ts left). Every stored row a file changes is changed here, so `guard` (a
 * request's file) rejects here the rows of other accounts' stored transactions (stored-accounts.ts), and the rows
 * older than what a file asked for later wrote go here (`askedAt`, outdated-rows.ts).
 */
export async function mergeStaged(
  connection: Connection,
  fileId: string,
  entries: readonly StagedEntry[],
  staged: StagedRows,
  chunks: ChunksMerged | undefined,
  guard: StoredAccountGuard | undefined,
  askedAt: Date | null,
): Promise<MergeCounts> {
  await takeMergeTurn(connection);
  const entryNames = entries.map((entry) => entry.name);
  if (chunks) {
    if (chunks.setAside > 0) await takeSetAsideRows(connection);
    await analyzeStaged(connection, STAGING_TABLE);
  } else {
    await planBulkJoins(
      connection,
      STAGING_TABLE,
      staged.acceptedByEntry.reduce((sum, n) => sum + n, 0),
    );
  }
  const rejected = guard ? await rejectRowsOfOtherAccounts(connection, guard) : 0;
  await moveRejectedRows(connection, fileId, entryNames);
  const outdated = await dropOutdatedRows(connection, askedAt);
  const acceptedByEntry =
    chunks || rejected > 0 || outdated > 0 ? await countAcceptedByEntry(connection) : staged.acceptedByEntry;
  let distinct = chunks?.inserted ?? 0;
  let inserted = chunks?.inserted ?? 0;
  let updated = 0;
  for (const { shape, entryIndexes } of groupByShape(entries, 0)) {
    const target: MergeTarget = { fileId, entryNames, entryIndexes, rewritesRowsOfThisFile: chunks !== undefined };
    const accepted = entryIndexes.reduce((sum, index) => sum + (acceptedByEntry[index] ?? 0), 0);
    if (accepted === 0) continue;
    const repeated = await repeatedRows(connection, target, staged.ids);
    // Ids an earlier chunk inserted are counted there; their rows here only rewrite them (`rewritesRowsOfThisFile`).
    const writtenBefore = chunks ? await rowsWrittenByThisFile(connection, target, staged.ids) : 0;
    const deduplicate = repeated > 0;
    const onlyDelta = accepted >= DELTA_MIN_ROWS && (await mostlyStored(connection, target));
    if (onlyDelta) await collectDelta(connection.db, shape, target, deduplicate);
    const options = { deduplicate, onlyDelta };
    if (canChangeStoredRows(shape))
      updated += (await updateChanged(connection.db, shape, target, options)) - writtenBefore;
    inserted += await insertNew(connection.db, shape, target, options);
    distinct += accepted - repeated - writtenBefore;
  }
  return { distinct, inserted, updated, unchanged: distinct - inserted - updated, rejected, outdated };
}

/** The rows earlier chunks set aside, back into the staging table for the last merge. */
async function takeSetAsideRows(connection: Connection): Promise<void> {
  const db = withStaging(connection.db);
  await db.insertInto(STAGING_TABLE).expression(db.selectFrom(SET_ASIDE_TABLE).selectAll()).execute();
}

/** Accepted rows now in the staging table, by entry index: the last chunk's and those set aside before it. */
async function countAcceptedByEntry(connection: Connection): Promise<number[]> {
  const rows = await withStaging(connection.db)
    .selectFrom(STAGING_TABLE)
    .select(({ fn }) => ['entry_index', fn.countAll<string>().as('accepted')])
    .where('reject_reason', 'is', null)
    .groupBy('entry_index')
    .execute();
  const byEntry: number[] = [];
  for (const row of rows) byEntry[row.entry_index] = Number(row.accepted);
  return byEntry;
}

/**
 * Below this many rows a merge joins the staged rows directly: a delta table is DDL, worth it only for large files.
 * The sample says whether a file is mostly loaded already: more than half of its first rows stored.
 */
const DELTA_MIN_ROWS = 10_000;
export const SAMPLE_ROWS = 1_000;

async function mostlyStored(connection: Connection, target: MergeTarget): Promise<boolean> {
  const { sampled, stored } = await sampleStoredShare(connection.db, target, SAMPLE_ROWS);
  return sampled > 0 && stored * 2 > sampled;
}

/** Superseded rows of the target's entries, checked among the filter's candidates alone when it kept them all. */
export function repeatedRows(connection: Connection, target: MergeTarget, ids: RepeatedIdFilter): Promise<number> {
  if (ids.overflowed) return countRepeatedRows(connection.db, target, 'all');
  if (ids.candidates.length === 0) return Promise.resolve(0);
  return countRepeatedRows(connection.db, target, ids.candidates);
}

/** Ids of the target's rows that an earlier chunk inserted: each was seen twice in the file, so it is a candidate. */
export function rowsWrittenByThisFile(
  connection: Connection,
  target: MergeTarget,
  ids: RepeatedIdFilter,
): Promise<number> {
  if (ids.overflowed) return countRowsWrittenByThisFile(connection.db, target, 'all');
  if (ids.candidates.length === 0) return Promise.resolve(0);
  return countRowsWrittenByThisFile(connection.db, target, ids.candidates);
}

/**
 * Entries of one zip usually share a header, which makes one merge for the file. A run of entries with
 * other columns gets its own statements, in entry order, so that no entry blanks columns it did not carry
 * and the last entry still wins. A transaction id present in two runs is then counted once per run.
 */
export function groupByShape(
  entries: readonly StagedEntry[],
  firstEntry: number,
): { shape: MergeShape; entryIndexes: number[] }[] {
  const groups: { key: string; shape: MergeShape; entryIndexes: number[] }[] = [];
  entries.forEach((entry, index) => {
    if (index < firstEntry) return;
    const key = `${[...entry.columns].sort().join(',')}|${entry.withExtra}`;
    const last = groups.at(-1);
    if (last?.key === key) last.entryIndexes.push(index);
    else groups.push({ key, shape: { columns: entry.columns, withExtra: entry.withExtra }, entryIndexes: [index] });
  });
  return groups;
}
