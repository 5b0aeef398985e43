import type { IngestLimits } from '../config/config.ts';
import type { Connection } from '../db/database.ts';
import type { FileResult, LoadedFile } from './file-result.ts';
import type { IngestProgress } from '../terminal/progress-bar.ts';
import type { RowScope } from '../normalize/row-scope.ts';

/** How `recon ingest`, a delivery's ingest and the tests load export files. */
export interface IngestOptions {
  /** Zone of the exports' DATE wall times (IANA name). */
  readonly timezone: string;
  readonly limits: IngestLimits;
  /**
   * What the file may write (row-scope.ts): a delivery's request, or the accounts `recon ingest` is configured with.
   * A row outside it is rejected; undefined: every row is taken.
   */
  readonly scope?: RowScope | undefined;
  readonly onProgress?: (progress: IngestProgress) => void;
  /** Called as each file finishes, before the next starts, so a long run reports as it goes. */
  readonly onResult?: (result: FileResult) => void;
  /**
   * Runs in a loaded file's own transaction, before it commits: what must be written with the file's rows or not at
   * all (the delivery the file came in, marked ingested). A failure rolls the file back as any failure of its load.
   */
  readonly beforeCommit?: (connection: Connection, loaded: LoadedFile) => Promise<void>;
  /** Told what a decoder accepted with a warning (bytes after the last bzip2 stream), in one line naming the file. */
  readonly onWarning?: (message: string) => void;
  /**
   * Stops between batches and before a file commits: the current file rolls back, is not recorded as failed,
   * and ingestFiles rejects with the signal's reason.
   */
  readonly signal?: AbortSignal;
  /** Files of at least this many bytes may load `changed-rows-first` (load-plan.ts); tests lower it. */
  readonly changedRowsFirstMinBytes?: number;
  /** Rows per chunk (load-plan.ts, `chunks`), on either database; tests lower it. */
  readonly chunkRows?: number;
  /** COPY text parsed ahead while a chunk merges: READ_AHEAD_BYTES unless a test lowers it. */
  readonly readAheadBytes?: number;
}
