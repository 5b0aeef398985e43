/**
 * How a file is loaded: the one place that chooses, from what is known before the file is read and what the load
 * learns as it goes. Each step and each chunk way named here is a state of the diagram in docs/architecture.md
 * ("How a file is loaded"); the loader (load-file.ts, load-records.ts) does what the plan says and reports back.
 */

/** Files under this size are loaded without `check-first-ids`: a first pass would cost more than it saves. */
export const CHANGED_ROWS_FIRST_MIN_BYTES = 512 * 1024;
/** How many of the first ids `check-first-ids` looks up: one index probe each, a few milliseconds. */
export const FIRST_IDS_SAMPLE = 1_000;
/** Past this many lines to load, `changed-rows-first` loads every record: listing them would cost memory for little. */
export const MAX_CHANGED_LINES = 200_000;
/**
 * Rows per chunk where the database merges a chunk while Node parses the next: enough that each chunk's statements
 * cost little beside its rows, few enough that the last merge, which nothing overlaps, stays short.
 */
export const CHUNK_ROWS = 100_000;

export interface KnownBeforeLoading {
  readonly sizeBytes: number;
  /**
   * Whether the database runs beside Node (PostgreSQL) and so can merge a chunk while Node parses the next one.
   * PGlite runs in Node's own thread: there chunks would only take turns, so a file is loaded whole.
   */
  readonly mergesWhileNodeParses: boolean;
  /** Rows per chunk instead of CHUNK_ROWS (tests lower it, on either database). */
  readonly chunkRows?: number;
  /** Instead of CHANGED_ROWS_FIRST_MIN_BYTES (tests lower it). */
  readonly changedRowsFirstMinBytes?: number;
}

/** What `changed-rows-first` found: the records of the file that would change or add a row. */
export interface ChangedRecords {
  /** The lines to load, by entry index: every line of each id whose last record would change or add a row. */
  readonly neededLines: ReadonlyMap<number, ReadonlySet<number>>;
  /** Distinct ids whose last record leaves their stored row as it is: never staged, counted as unchanged. */
  readonly unchangedIds: number;
  /** Records the file holds, changed or not. */
  readonly records: number;
}

export interface LearnedWhileLoading {
  /** What `check-first-ids` found: how many of the first ids it looked up, and how many of them are stored. */
  readonly firstIds?: { readonly sampled: number; readonly stored: number };
  /** What `changed-rows-first` found, or that more than MAX_CHANGED_LINES lines would load. */
  readonly changedRecords?: ChangedRecords | 'too-many';
}

/** Which records of the file are normalized, staged and merged. */
export type RecordsToLoad =
  | { readonly kind: 'every-record' }
  /** Only the lines `changed-rows-first` found; the others are counted as unchanged. */
  | { readonly kind: 'changed-records'; readonly changed: ChangedRecords };

/** The names of the steps, as the diagram of docs/architecture.md draws them. */
export const LOAD_STEPS = [
  'check-first-ids',
  'changed-rows-first',
  'nothing-changed',
  'whole-file',
  'chunks',
] as const satisfies readonly LoadStep['step'][];

export type LoadStep =
  /** Look up the first ids of the file: is it mostly loaded already, as the nightly windows overlap? */
  | { readonly step: 'check-first-ids'; readonly sampleSize: number }
  /**
   * It is: read every record's id and digest alone into a narrow table, and join it to recon.transactions once, to
   * find the records that would change or add a row. Only those are then normalized, staged and merged.
   */
  | { readonly step: 'changed-rows-first'; readonly maxChangedLines: number }
  /** Every record leaves its stored row as it is: nothing is staged, the file is recorded with its counts. */
  | { readonly step: 'nothing-changed'; readonly changed: ChangedRecords }
  /** Stage the records, then merge them in one go. */
  | { readonly step: 'whole-file'; readonly records: RecordsToLoad }
  /**
   * Stage the records in chunks of `chunkRows`, each merged while the next one parses; each chunk goes one of the
   * ChunkWays. A file smaller than a chunk is loaded as a whole file.
   */
  | { readonly step: 'chunks'; readonly records: RecordsToLoad; readonly chunkRows: number };

/** The next step of a file's load, from what is known and what has been learned so far. */
export function planLoad(known: KnownBeforeLoading, learned: LearnedWhileLoading): LoadStep {
  if (known.sizeBytes >= (known.changedRowsFirstMinBytes ?? CHANGED_ROWS_FIRST_MIN_BYTES)) {
    const { firstIds, changedRecords } = learned;
    if (firstIds === undefined) return { step: 'check-first-ids', sampleSize: FIRST_IDS_SAMPLE };
    if (firstIds.sampled > 0 && firstIds.stored * 2 > firstIds.sampled) {
      if (changedRecords === undefined) return { step: 'changed-rows-first', maxChangedLines: MAX_CHANGED_LINES };
      if (changedRecords !== 'too-many') {
        if (changedRecords.neededLines.size === 0) return { step: 'nothing-changed', changed: changedRecords };
        return loadRecords(known, { kind: 'changed-records', changed: changedRecords });
      }
    }
  }
  return loadRecords(known, { kind: 'every-record' });
}

function loadRecords(known: KnownBeforeLoading, records: RecordsToLoad): LoadStep {
  const chunkRows = known.chunkRows ?? (known.mergesWhileNodeParses ? CHUNK_ROWS : Number.POSITIVE_INFINITY);
  return Number.isFinite(chunkRows) ? { step: 'chunks', records, chunkRows } : { step: 'whole-file', records };
}

/**
 * How a chunk's rows reach recon.transactions:
 * - `staged`: COPYed into the staging table; the chunk's merge inserts it whole if its ids prove new (its first ids
 *   and the ids seen in an earlier chunk are looked up, and the insert proves it in a savepoint), and otherwise
 *   inserts its new ids and sets the rows of stored ids aside for the file's last merge.
 * - `straight-into-table`: COPYed straight into recon.transactions in a savepoint, with no staging and no second
 *   write. A stored id (or one twice in the chunk) fails the COPY; its rows then go to the staging table instead.
 * - `staged-after-stored-id`: staged, merged by inserting the new ids and setting the stored ones aside at once: an
 *   insert of this file has met a stored id, so trying a chunk whole is likely to fail again.
 */
export const CHUNK_WAYS = ['staged', 'straight-into-table', 'staged-after-stored-id'] as const;
export type ChunkWay = (typeof CHUNK_WAYS)[number];

/** What a chunk's COPY and merge showed of its ids. */
export const CHUNK_OUTCOMES = ['all-new', 'some-stored', 'stored-id-met'] as const satisfies readonly ChunkOutcome[];
export type ChunkOutcome =
  /** Every id was new: the chunk was inserted whole, or COPYed straight into the table. */
  | 'all-new'
  /** Some ids looked stored already: the new ones were inserted, the stored ones set aside. */
  | 'some-stored'
  /** An insert or a COPY that expected new ids met a stored one, and was undone. */
  | 'stored-id-met';

/** The way of a file's first chunk: nothing is known of its ids yet. */
export const FIRST_CHUNK_WAY: ChunkWay = 'staged';

/**
 * The way of the chunks after one that ended with `outcome`. Chunks of new ids go straight into the table once one
 * has proven new; a stored id met on the way sends the rest of the file through staging for good.
 */
export function nextChunkWay(way: ChunkWay, outcome: ChunkOutcome): ChunkWay {
  if (way === 'staged-after-stored-id' || outcome === 'stored-id-met') return 'staged-after-stored-id';
  return outcome === 'all-new' ? 'straight-into-table' : 'staged';
}

/** Whether a staged chunk's merge first tries to insert the chunk whole, as new ids. */
export function triesWholeInsert(way: ChunkWay): boolean {
  return way !== 'staged-after-stored-id';
}
