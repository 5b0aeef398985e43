import { Readable } from 'node:stream';
import type { Connection } from '../db/database.ts';
import type { TransactionColumn } from '../normalize/transaction-row.ts';
import {
  canChangeStoredRows,
  collectDelta,
  countRepeatedRows,
  insertNew,
  sampleStoredShare,
  updateChanged,
  type MergeShape,
  type MergeTarget,
} from './merge-statements.ts';
import { planBulkJoins } from './bulk-plans.ts';
import { INSERT_REJECTED_ROWS_SQL } from './rejected-rows-sql.ts';
import { createRepeatedIdFilter, type RepeatedIdFilter } from './repeated-id-filter.ts';
import { createStagingTableSql, STAGING_TABLE, stagingCopySql } from './staging-table.ts';

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
  /** Accepted rows staged, by entry index. */
  readonly acceptedByEntry: number[];
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
  await connection.query(createStagingTableSql());
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
  copyText: AsyncIterable<string>,
): Promise<void> {
  await connection.copyFrom(stagingCopySql(stagedColumns(entry), entry.withExtra), Readable.from(copyText, { objectMode: false }));
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
  await connection.query('SELECT pg_advisory_xact_lock($1)', [MERGE_LOCK]);
}

export async function mergeStaged(
  connection: Connection,
  fileId: string,
  entries: readonly StagedEntry[],
  staged: StagedRows,
): Promise<MergeCounts> {
  await takeMergeTurn(connection);
  const entryNames = entries.map((entry) => entry.name);
  await connection.query(INSERT_REJECTED_ROWS_SQL, [fileId, entryNames]);
  await planBulkJoins(connection, STAGING_TABLE);
  let distinct = 0;
  let inserted = 0;
  let updated = 0;
  for (const { shape, entryIndexes } of groupByShape(entries)) {
    const target: MergeTarget = { fileId, entryNames, entryIndexes };
    const accepted = entryIndexes.reduce((sum, index) => sum + (staged.acceptedByEntry[index] ?? 0), 0);
    const repeated = await repeatedRows(connection, target, staged.ids);
    const deduplicate = repeated > 0;
    const onlyDelta = accepted >= DELTA_MIN_ROWS && (await mostlyStored(connection, target));
    if (onlyDelta) await collectDelta(connection.db, shape, target, deduplicate);
    const options = { deduplicate, onlyDelta };
    if (canChangeStoredRows(shape)) updated += await updateChanged(connection.db, shape, target, options);
    inserted += await insertNew(connection.db, shape, target, options);
    distinct += accepted - repeated;
  }
  return { distinct, inserted, updated, unchanged: distinct - inserted - updated };
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

/**
 * Entries of one zip usually share a header, which makes one merge for the file. A run of entries with
 * other columns gets its own statements, in entry order, so that no entry blanks columns it did not carry
 * and the last entry still wins. A transaction id present in two runs is then counted once per run.
 */
function groupByShape(entries: readonly StagedEntry[]): { shape: MergeShape; entryIndexes: number[] }[] {
  const groups: { key: string; shape: MergeShape; entryIndexes: number[] }[] = [];
  entries.forEach((entry, index) => {
    const key = `${[...entry.columns].sort().join(',')}|${entry.withExtra}`;
    const last = groups.at(-1);
    if (last?.key === key) last.entryIndexes.push(index);
    else groups.push({ key, shape: { columns: entry.columns, withExtra: entry.withExtra }, entryIndexes: [index] });
  });
  return groups;
}
