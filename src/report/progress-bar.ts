/**
 * A one-line progress bar on stderr while files load: the file, bytes read of it, rows and rows/s.
 * Only on a terminal (a log or a pipe gets the summary lines and nothing else), redrawn at most
 * every 100 ms so that drawing never costs the load noticeable time.
 */
export interface IngestProgress {
  readonly file: string;
  /** Bytes of the file as delivered (compressed) read so far, and its size. */
  readonly bytesRead: number;
  readonly totalBytes: number;
  /** Data records read so far from this file. */
  readonly rows: number;
}

export interface ProgressBar {
  update(progress: IngestProgress): void;
  /** Erases the bar, so that the next line (a summary) starts clean. */
  clear(): void;
}

type Terminal = NodeJS.WritableStream & { isTTY?: boolean; columns?: number };

const REDRAW_MS = 100;
const BAR_WIDTH = 20;

export function createProgressBar(stream: Terminal, now: () => number = performance.now.bind(performance)): ProgressBar {
  if (!stream.isTTY) return { update() {}, clear() {} };
  let lastDraw = -Infinity;
  let drawn = false;
  let current: { file: string; startedAt: number } | undefined;
  return {
    update(progress) {
      const time = now();
      if (current?.file !== progress.file) current = { file: progress.file, startedAt: time };
      else if (time - lastDraw < REDRAW_MS) return;
      lastDraw = time;
      drawn = true;
      const line = formatProgressLine(progress, (time - current.startedAt) / 1000, stream.columns ?? 80);
      stream.write(`\r${line}\x1b[K`);
    },
    clear() {
      if (drawn) stream.write('\r\x1b[K');
      drawn = false;
    },
  };
}

export function formatProgressLine(progress: IngestProgress, elapsedSeconds: number, columns: number): string {
  const fraction = progress.totalBytes > 0 ? Math.min(1, progress.bytesRead / progress.totalBytes) : 1;
  const filled = Math.round(fraction * BAR_WIDTH);
  const bar = `[${'#'.repeat(filled)}${'-'.repeat(BAR_WIDTH - filled)}] ${String(Math.floor(fraction * 100)).padStart(3)}%`;
  const rate = elapsedSeconds > 0 ? Math.round(progress.rows / elapsedSeconds) : 0;
  const figures = `${formatMegabytes(progress.bytesRead)}/${formatMegabytes(progress.totalBytes)} MB  ${progress.rows} rows  ${rate} rows/s`;
  const tail = ` ${bar} ${figures}`;
  const room = Math.max(0, columns - 1 - tail.length);
  const name = progress.file.length <= room ? progress.file : '…' + progress.file.slice(-(room - 1));
  return room > 1 ? name + tail : tail.trimStart().slice(0, Math.max(0, columns - 1));
}

function formatMegabytes(bytes: number): string {
  return (bytes / 1024 / 1024).toFixed(1);
}
