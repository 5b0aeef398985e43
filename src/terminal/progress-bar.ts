/**
 * A one-line progress bar on stderr while files load: the file, the share of its bytes read, rows and rows/s.
 * Only on a terminal (a log or a pipe gets the summary lines and nothing else), redrawn at most
 * every 100 ms so that drawing never costs the load noticeable time.
 *
 * The share is of the file as delivered, compressed bytes for an archive: the only size known in advance.
 */
export interface IngestProgress {
  readonly file: string;
  /**
   * Looking for the records that would change a row, in a file mostly loaded already (`changed-rows-first`), reading
   * the file into staging, then merging the staged rows into recon.transactions (one long statement).
   */
  readonly phase: 'checking' | 'reading' | 'merging';
  /** Size of the file as delivered. */
  readonly fileBytes: number;
  /** Bytes of the file as delivered read so far. */
  readonly bytesRead: number;
  /** Data records read so far. */
  readonly rows: number;
}

export interface ProgressBar {
  update(progress: IngestProgress): void;
  /** Erases the bar, so that the next line (a summary) starts clean. */
  clear(): void;
}

type Terminal = NodeJS.WritableStream & { isTTY?: boolean; columns?: number };

const REDRAW_MS = 100;
const BAR_WIDTH = 10;

export function createProgressBar(
  stream: Terminal,
  now: () => number = performance.now.bind(performance),
): ProgressBar | undefined {
  if (!stream.isTTY) return undefined;
  let lastDraw = -Infinity;
  let drawn = false;
  let current: { file: string; startedAt: number } | undefined;
  return {
    update(progress) {
      const time = now();
      if (current?.file !== progress.file) current = { file: progress.file, startedAt: time };
      else if (time - lastDraw < REDRAW_MS && progress.phase !== 'merging') return;
      lastDraw = time;
      drawn = true;
      const line = formatProgressLine(progress, (time - current.startedAt) / 1000, stream.columns || 80);
      stream.write(`\r${line}\x1b[K`);
    },
    clear() {
      if (drawn) stream.write('\r\x1b[K');
      drawn = false;
    },
  };
}

/**
 * `FILE [####------]  42% 8.7/20.8 MB  418000 rows  112000 rows/s`, then `FILE 1000000 rows read, merging ...`,
 * cut to the terminal's width by shortening the file name from the left (its end says the most).
 */
export function formatProgressLine(progress: IngestProgress, elapsedSeconds: number, columns: number): string {
  let tail: string;
  if (progress.phase === 'merging') {
    tail = ` ${progress.rows} rows read, merging into recon.transactions`;
  } else {
    const fraction = progress.fileBytes > 0 ? Math.min(1, progress.bytesRead / progress.fileBytes) : 1;
    const filled = Math.round(fraction * BAR_WIDTH);
    const bar = `[${'#'.repeat(filled)}${'-'.repeat(BAR_WIDTH - filled)}] ${String(Math.floor(fraction * 100)).padStart(3)}%`;
    // The first draw of a file comes at its start: no rate yet rather than a made-up one.
    const rate = elapsedSeconds > 0 ? `  ${Math.round(progress.rows / elapsedSeconds)} rows/s` : '';
    const checked = progress.phase === 'checking' ? ' checked against recon.transactions' : '';
    tail = ` ${bar} ${megabytes(progress.bytesRead)}/${megabytes(progress.fileBytes)} MB  ${progress.rows} rows${checked}${rate}`;
  }
  const room = columns - 1 - tail.length;
  if (room < 2) return tail.trimStart().slice(0, Math.max(0, columns - 1));
  const name = progress.file.length <= room ? progress.file : '…' + progress.file.slice(-(room - 1));
  return name + tail;
}

function megabytes(bytes: number): string {
  return (bytes / 1024 / 1024).toFixed(1);
}
