import type { Connection } from '../db/database.ts';
import { analyzeStaged, planBulkJoins } from './bulk-plans.ts';
import { triesWholeInsert, type ChunkOutcome, type ChunkWay } from './load-plan.ts';
import {
  insertAllStaged,
  insertNewSettingAsideStored,
  sampleStoredShare,
  type MergeShape,
  type MergeTarget,
} from './merge-statements.ts';
import { moveRejectedRows } from './rejected-rows.ts';
import type { RepeatedIdFilter } from './repeated-id-filter.ts';
import { unlessUniqueViolation } from './savepoint.ts';
import {
  groupByShape,
  rowsWrittenByThisFile,
  repeatedRows,
  SAMPLE_ROWS,
  takeMergeTurn,
  type ChunksMerged,
  type StagedEntry,
  type StagedRows,
} from './staged-file.ts';
import { createStagingTable, emptyStagingTable, SET_ASIDE_TABLE, STAGING_TABLE } from './staging-table.ts';

/** A chunk as the load has COPYed it, for its merge. */
export interface ChunkToMerge {
  /** The way the load plan gave this chunk. */
  readonly way: ChunkWay;
  /** Undefined for the file's first chunk. */
  readonly merged: ChunksMerged | undefined;
  /** Whether the staging table may hold accepted rows since the last merge: false after a chunk that went straight. */
  readonly acceptedStaged: boolean;
}

/**
 * Loading in chunks. A large file's rows would otherwise be merged in one statement once all of them are staged,
 * the database idle while Node parses and Node idle while the database merges. Instead, every `chunkRows` staged
 * rows, `mergeChunk` inserts the chunk's new ids at once while the next chunk parses (read-ahead.ts), and sets
 * aside the rows of ids stored already. Only new ids are merged early because only they are final: an id stored
 * before the file must be compared once, with its last row in the whole file (a row changed in one chunk and
 * changed back in a later one is unchanged, its lineage untouched), so all of its rows wait for the last merge,
 * which takes them with the last chunk's rows as it would a whole file's. A new id seen again in a later chunk
 * is a row this file wrote by then: the last merge rewrites it with its last row and counts it once, as inserted.
 * What the merge shows of the chunk's ids (`ChunkOutcome`) gives the load plan the way of the next chunks.
 * Merges take their turn at the first chunk, as a whole file's merge does, and keep it to the commit.
 */
export async function mergeChunk(
  connection: Connection,
  fileId: string,
  entries: readonly StagedEntry[],
  staged: StagedRows,
  chunk: ChunkToMerge,
): Promise<{ merged: ChunksMerged; outcome: ChunkOutcome }> {
  await takeMergeTurn(connection);
  const entryNames = entries.map((entry) => entry.name);
  await moveRejectedRows(connection, fileId, entryNames);
  if (chunk.merged) {
    await analyzeStaged(connection, STAGING_TABLE);
  } else {
    await planBulkJoins(connection, STAGING_TABLE);
    await createStagingTable(connection.db, SET_ASIDE_TABLE);
  }
  let { inserted, setAside } = chunk.merged ?? { inserted: 0, setAside: 0 };
  let outcome: ChunkOutcome = 'all-new';
  let triesWhole = triesWholeInsert(chunk.way);
  const groups = chunk.acceptedStaged ? groupByShape(entries, chunk.merged?.firstEntryStaged ?? 0) : [];
  for (const { shape, entryIndexes } of groups) {
    const target: MergeTarget = { fileId, entryNames, entryIndexes };
    const deduplicate = (await repeatedRows(connection, target, staged.ids)) > 0;
    if (triesWhole) {
      const whole = await insertIfAllNew(connection, shape, target, staged.ids, deduplicate);
      if (typeof whole === 'number') {
        inserted += whole;
        continue;
      }
      if (whole === 'stored-id-met') {
        triesWhole = false;
        outcome = 'stored-id-met';
      }
    }
    if (outcome === 'all-new') outcome = 'some-stored';
    const rows = await insertNewSettingAsideStored(connection.db, shape, target, deduplicate);
    inserted += rows.inserted;
    setAside += rows.setAside;
  }
  await emptyStagingTable(connection.db);
  return { merged: { inserted, setAside, firstEntryStaged: entries.length - 1 }, outcome };
}

/**
 * The usual chunk, a new file's or a new stretch of one, holds new ids only: inserted as they are, it costs what a
 * whole file's insert costs per row, less than skipping stored ids one by one and setting them aside. Whether it
 * does is asked cheaply first (its first rows' ids, and the ids staged in an earlier chunk too), and proven by the
 * insert itself, in a savepoint: a stored id fails it, and the chunk's rows are back as they were.
 */
async function insertIfAllNew(
  connection: Connection,
  shape: MergeShape,
  target: MergeTarget,
  ids: RepeatedIdFilter,
  deduplicate: boolean,
): Promise<number | Exclude<ChunkOutcome, 'all-new'>> {
  if ((await sampleStoredShare(connection.db, target, SAMPLE_ROWS)).stored > 0) return 'some-stored';
  if ((await rowsWrittenByThisFile(connection, target, ids)) > 0) return 'some-stored';
  const inserted = await unlessUniqueViolation(connection, 'recon_chunk', () =>
    insertAllStaged(connection.db, shape, target, deduplicate),
  );
  return inserted ?? 'stored-id-met';
}
