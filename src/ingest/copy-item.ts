import type { ChunkWay } from './load-plan.ts';

/**
 * What flows from an entry's parser to its COPY statements (entry-copy-items.ts to copy-chunk-rows.ts, through
 * read-ahead.ts): COPY text, cut where a chunk or the entry ends. A chunk runs on across entries; the rows of one
 * chunk in one entry are COPYed by one statement, the way the load plan gave them when the parser reached them.
 */
export type CopyItem = CopyRows | RejectedRows | ChunkEnd | EntryEnd;

/** COPY text lines: for the staging table, or for recon.transactions itself in a `straight-into-table` chunk. */
export interface CopyRows {
  readonly kind: 'rows';
  readonly text: Buffer;
  /** The lines `text` holds. */
  readonly lines: number;
}

/**
 * The rejected records of a `straight-into-table` chunk, as staging table lines: recon.transactions cannot take them,
 * so they are staged once the chunk's COPY is done. (In a staged chunk they are `rows` among the others.)
 */
export interface RejectedRows {
  readonly kind: 'rejected';
  readonly text: string;
}

/** The chunk ends here; the rows after it were encoded for `nextWay`. */
export interface ChunkEnd {
  readonly kind: 'chunk-end';
  readonly nextWay: ChunkWay;
}

/** The entry's last item: what it read, and how far into the open chunk its last rows went. */
export interface EntryEnd {
  readonly kind: 'entry-end';
  /** Data records of the entry, loaded or not. */
  readonly records: number;
  readonly rejected: number;
  /** Records loaded since the last chunk ended, which the next entry's chunk continues from. */
  readonly recordsInOpenChunk: number;
}

/** What an item weighs in the read-ahead: its COPY text, kept off V8's heap as a Buffer; the rest weighs nothing. */
export function copyItemBytes(item: CopyItem): number {
  return item.kind === 'rows' ? item.text.length : 0;
}

export function isCopyRows(item: CopyItem): item is CopyRows {
  return item.kind === 'rows';
}

export function isRejectedRows(item: CopyItem): item is RejectedRows {
  return item.kind === 'rejected';
}
