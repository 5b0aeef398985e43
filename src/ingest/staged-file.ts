import { Readable } from 'node:stream';
import { sql } from 'kysely';
import type { Connection } from '../db/database.ts';
import type { TransactionColumn } from '../normalize/transaction-row.ts';
import {
  canChangeStoredRows,
  collectDelta,
  countOwnRows,
  countRepeatedRows,
  insertAllStaged,
  insertNew,
  insertNewKeepingStored,
  sampleStoredShare,
  updateChanged,
  type MergeShape,
  type MergeTarget,
} from './merge-statements.ts';
import { analyzeStaged, planBulkJoins } from './bulk-plans.ts';
import { moveRejectedRows } from './rejected-rows.ts';
import { createRepeatedIdFilter, type RepeatedIdFilter } from './repeated-id-filter.ts';
import { unlessUniqueViolation } from './savepoint.ts';
import {
  createStagingTable,
  emptyStagingTable,
  LEFTOVER_TABLE,
  STAGING_TABLE,
  stagingCopySql,
  withStaging,
} from './staging-table.ts';

/**
 * One file's rows on their way into recon.transactions, inside the caller's transaction:
 * `beginStaging` creates the staging table, `stageEntry` COPYs each csv entry into it, `merge` moves the
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
  /** Accepted rows encoded, by entry index (staged, or COPYed directly when the file loads in chunks). */
  readonly acceptedByEntry: number[];
  /** Whether the staging table may hold accepted rows since the last chunk: false after chunks that went direct. */
  acceptedInStaging: boolean;
  /** Set once a chunk of the file has been merged (`mergeChunk`). */
  chunks?: {
    inserted: number;
    leftover: number;
    firstEntryStaged: number;
    /** A chunk's insert met stored ids its checks did not show: the later chunks take the careful way at once. */
    insertFailed: boolean;
    /**
     * Whether the next chunks go straight into recon.transactions (direct-copy.ts): once a chunk has proven all new,
     * until a chunk meets a stored id.
     */
    direct: boolean;
  };
}

export interface MergeCounts {
  /** Distinct transaction ids among the accepted rows. */
  readonly distinct: number;
  readonly inserted: number;
  readonly updated: number;
  readonly unchanged: number;
}

/** The transaction columns an entry's COPY stream carries, in order. */
export function stagedColumns(entry: StagedEntry): TransactionColumn[] {
  return ['transaction_id', ...entry.columns];
}

export async function beginStaging(connection: Connection): Promise<StagedRows> {
  await createStagingTable(connection.db);
  return { ids: createRepeatedIdFilter(), acceptedByEntry: [], acceptedInStaging: true };
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
 * also avoids the deadlock, but sorting a million staged rows put the benchmark's re-ingest at 1.26-1.31x its
 * reference, against 1.05-1.21x without.)
 */
const MERGE_LOCK = 0x7265636f6e6d; // "reconm"

/** Waits for this load's turn to merge; held until its transaction ends (a second call in it returns at once). */
export async function takeMergeTurn(connection: Connection): Promise<void> {
  await sql`SELECT pg_advisory_xact_lock(${MERGE_LOCK})`.execute(connection.db);
}

/**
 * Loading in chunks. A large file's rows would otherwise be merged in one statement once all of them are staged,
 * the database idle while Node parses and Node idle while the database merges. Instead, every `chunkRows` staged
 * rows, `mergeChunk` inserts the chunk's new ids at once while the next chunk parses (read-ahead.ts), and keeps
 * aside the rows of ids stored already. Only new ids are merged early because only they are final: an id stored
 * before the file must be compared once, with its last row in the whole file (a row changed in one chunk and
 * changed back in a later one is unchanged, its lineage untouched), so all of its rows wait for the last merge,
 * which takes them with the last chunk's rows as it would a whole file's. A new id seen again in a later chunk
 * is this file's own row by then: the last merge rewrites it with its last row and counts it once, as inserted.
 * Once a chunk has proven all new, the next ones skip staging and go straight into recon.transactions
 * (direct-copy.ts); what that COPY cannot take comes back here through staging.
 * Merges take their turn at the first chunk, as a whole file's merge does, and keep it to the commit.
 */
export async function mergeChunk(
  connection: Connection,
  fileId: string,
  entries: readonly StagedEntry[],
  staged: StagedRows,
): Promise<void> {
  await takeMergeTurn(connection);
  const entryNames = entries.map((entry) => entry.name);
  await moveRejectedRows(connection, fileId, entryNames);
  if (staged.chunks) {
    await analyzeStaged(connection, STAGING_TABLE);
  } else {
    await planBulkJoins(connection, STAGING_TABLE);
    await createStagingTable(connection.db, LEFTOVER_TABLE);
    staged.chunks = { inserted: 0, leftover: 0, firstEntryStaged: 0, insertFailed: false, direct: false };
  }
  const chunks = staged.chunks;
  let allNew = !chunks.insertFailed;
  const groups = staged.acceptedInStaging ? groupByShape(entries, chunks.firstEntryStaged) : [];
  for (const { shape, entryIndexes } of groups) {
    const target: MergeTarget = { fileId, entryNames, entryIndexes };
    const deduplicate = (await repeatedRows(connection, target, staged.ids)) > 0;
    const newRows = chunks.insertFailed
      ? undefined
      : await insertIfAllNew(connection, shape, target, staged, deduplicate);
    if (newRows !== undefined) {
      chunks.inserted += newRows;
      continue;
    }
    allNew = false;
    const { inserted, kept } = await insertNewKeepingStored(connection.db, shape, target, deduplicate);
    chunks.inserted += inserted;
    chunks.leftover += kept;
  }
  chunks.direct = allNew && !chunks.insertFailed;
  await emptyStagingTable(connection.db);
  chunks.firstEntryStaged = entries.length - 1;
  staged.acceptedInStaging = false;
}

/**
 * The usual chunk, a new file's or a new stretch of one, holds new ids only: inserted as they are, it costs what a
 * whole file's insert costs per row, where skipping stored ids one by one cost a fifth more and setting the
 * others aside as much again. Whether it does is asked cheaply first (its first rows' ids, and the ids staged in
 * an earlier chunk too), and proven by the insert itself, in a savepoint: a stored id fails it, the chunk's rows
 * are back as they were, and undefined says so.
 */
async function insertIfAllNew(
  connection: Connection,
  shape: MergeShape,
  target: MergeTarget,
  staged: StagedRows,
  deduplicate: boolean,
): Promise<number | undefined> {
  if ((await sampleStoredShare(connection.db, target, SAMPLE_ROWS)).stored > 0) return undefined;
  if ((await ownRows(connection, target, staged.ids)) > 0) return undefined;
  const inserted = await unlessUniqueViolation(connection, 'recon_chunk', () =>
    insertAllStaged(connection.db, shape, target, deduplicate),
  );
  if (inserted === undefined) staged.chunks!.insertFailed = true;
  return inserted;
}

export async function mergeStaged(
  connection: Connection,
  fileId: string,
  entries: readonly StagedEntry[],
  staged: StagedRows,
): Promise<MergeCounts> {
  await takeMergeTurn(connection);
  const entryNames = entries.map((entry) => entry.name);
  await moveRejectedRows(connection, fileId, entryNames);
  const { chunks } = staged;
  let acceptedByEntry = staged.acceptedByEntry;
  if (chunks) {
    if (chunks.leftover > 0) await takeLeftovers(connection);
    acceptedByEntry = await countAcceptedByEntry(connection);
    await analyzeStaged(connection, STAGING_TABLE);
  } else {
    await planBulkJoins(connection, STAGING_TABLE);
  }
  let distinct = chunks?.inserted ?? 0;
  let inserted = chunks?.inserted ?? 0;
  let updated = 0;
  for (const { shape, entryIndexes } of groupByShape(entries, 0)) {
    const target: MergeTarget = { fileId, entryNames, entryIndexes, refreshOwnRows: chunks !== undefined };
    const accepted = entryIndexes.reduce((sum, index) => sum + (acceptedByEntry[index] ?? 0), 0);
    if (accepted === 0) continue;
    const repeated = await repeatedRows(connection, target, staged.ids);
    // Ids an earlier chunk inserted are counted there; their rows here only refresh them (`refreshOwnRows`).
    const own = chunks ? await ownRows(connection, target, staged.ids) : 0;
    const deduplicate = repeated > 0;
    const onlyDelta = accepted >= DELTA_MIN_ROWS && (await mostlyStored(connection, target));
    if (onlyDelta) await collectDelta(connection.db, shape, target, deduplicate);
    const options = { deduplicate, onlyDelta };
    if (canChangeStoredRows(shape)) updated += (await updateChanged(connection.db, shape, target, options)) - own;
    inserted += await insertNew(connection.db, shape, target, options);
    distinct += accepted - repeated - own;
  }
  return { distinct, inserted, updated, unchanged: distinct - inserted - updated };
}

/** The rows kept aside by earlier chunks, back into the staging table for the last merge. */
async function takeLeftovers(connection: Connection): Promise<void> {
  const db = withStaging(connection.db);
  await db.insertInto(STAGING_TABLE).expression(db.selectFrom(LEFTOVER_TABLE).selectAll()).execute();
}

/** Accepted rows now in the staging table, by entry index: the last chunk's and those kept aside before it. */
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
const SAMPLE_ROWS = 1_000;

async function mostlyStored(connection: Connection, target: MergeTarget): Promise<boolean> {
  const { sampled, stored } = await sampleStoredShare(connection.db, target, SAMPLE_ROWS);
  return sampled > 0 && stored * 2 > sampled;
}

/** Superseded rows of the target's entries, checked among the filter's candidates alone when it kept them all. */
function repeatedRows(connection: Connection, target: MergeTarget, ids: RepeatedIdFilter): Promise<number> {
  if (ids.overflowed) return countRepeatedRows(connection.db, target, 'all');
  if (ids.candidates.length === 0) return Promise.resolve(0);
  return countRepeatedRows(connection.db, target, ids.candidates);
}

/** Ids of the target's rows that an earlier chunk inserted: each was seen twice in the file, so it is a candidate. */
function ownRows(connection: Connection, target: MergeTarget, ids: RepeatedIdFilter): Promise<number> {
  if (ids.overflowed) return countOwnRows(connection.db, target, 'all');
  if (ids.candidates.length === 0) return Promise.resolve(0);
  return countOwnRows(connection.db, target, ids.candidates);
}

/**
 * Entries of one zip usually share a header, which makes one merge for the file. A run of entries with
 * other columns gets its own statements, in entry order, so that no entry blanks columns it did not carry
 * and the last entry still wins. A transaction id present in two runs is then counted once per run.
 */
function groupByShape(
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
