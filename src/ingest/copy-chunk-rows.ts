import type { Connection } from '../db/database.ts';
import { isCopyRows, isRejectedRows, type CopyItem, type CopyRows } from './copy-item.ts';
import { copyStraight, stageRowsInstead } from './straight-copy.ts';
import type { ChunkWay } from './load-plan.ts';
import type { ReadAhead } from './read-ahead.ts';
import { stageEntry, type StagedEntry } from './staged-file.ts';

/** Where a chunk's rows of one entry went. */
export type CopiedRows =
  | { readonly into: 'staging' }
  | { readonly into: 'recon.transactions'; readonly rows: number }
  /** A `straight-into-table` COPY met a stored id: nothing of it was written, and its rows were staged instead. */
  | { readonly into: 'staging-after-stored-id' };

/**
 * COPYs the entry's rows up to the next chunk end or the entry's end, by one statement, the way the parser encoded
 * them: into the staging table, or straight into recon.transactions. The item that ends them is left to the caller.
 */
export async function copyChunkRows(
  connection: Connection,
  entry: StagedEntry,
  entryIndex: number,
  way: ChunkWay,
  items: ReadAhead<CopyItem>,
): Promise<CopiedRows> {
  if (way !== 'straight-into-table') {
    await stageEntry(connection, entry, copyText(items));
    return { into: 'staging' };
  }
  // Kept until the COPY is done: a stored id fails it, possibly after it has read them all, and they go to staging.
  const kept: CopyRows[] = [];
  let copied: CopiedRows;
  if (await copyStraight(connection, entry, copyText(items, kept))) {
    copied = { into: 'recon.transactions', rows: kept.reduce((sum, rows) => sum + rows.lines, 0) };
  } else {
    // The rest of the chunk's rows, if the failed COPY did not read them all.
    for await (const text of copyText(items, kept)) void text;
    await stageRowsInstead(
      connection,
      entry,
      entryIndex,
      kept.map((rows) => rows.text),
    );
    copied = { into: 'staging-after-stored-id' };
  }
  const rejected = await items.nextIf(isRejectedRows);
  if (rejected) await stageEntry(connection, entry, [rejected.text]);
  return copied;
}

/**
 * The text of the `rows` items up to the first item of another kind, which stays in `items`: a COPY that stops there
 * never reads the next chunk's rows, whatever the way they were encoded for. Each is added to `kept` when given.
 */
async function* copyText(items: ReadAhead<CopyItem>, kept?: CopyRows[]): AsyncGenerator<Buffer> {
  for (let rows = await items.nextIf(isCopyRows); rows; rows = await items.nextIf(isCopyRows)) {
    kept?.push(rows);
    yield rows.text;
  }
}
