import type { IncomingMessage } from 'node:http';

/** The sender trickled its body: too few bytes in a whole window. */
export class SlowClientError extends Error {
  constructor(minBytesPerSecond: number, windowMs: number) {
    super(`the client sent less than ${minBytesPerSecond} bytes/s for ${windowMs / 1000} s`);
    this.name = 'SlowClientError';
  }
}

export interface SlowClientRule {
  /** RECON_MIN_UPLOAD_BYTES_PER_SECOND: the slowest body accepted, averaged over a window. */
  readonly minBytesPerSecond: number;
  /** RECON_SLOW_UPLOAD_WINDOW_MS. */
  readonly windowMs: number;
}

export const DEFAULT_SLOW_CLIENT_RULE: SlowClientRule = { minBytesPerSecond: 1024, windowMs: 30_000 };

/**
 * Cuts a request whose body arrives slower than the rule while it is being read: a client sending one byte a
 * second would otherwise hold its connection, its upload slot and its temp file for as long as it likes. A window
 * in which the reader itself held the body back (`readerBusy`: writing to disk, waiting for the database) does not
 * count. The request is destroyed with a SlowClientError. Returns `stop`, to call once the body has been read.
 */
export function guardAgainstSlowClient(
  request: IncomingMessage,
  rule: SlowClientRule,
  readerBusy: () => boolean,
): () => void {
  const socket = request.socket;
  let mark = socket.bytesRead;
  let readerWasBusy = readerBusy();
  const timer = setInterval(() => {
    const received = socket.bytesRead - mark;
    mark = socket.bytesRead;
    const excused = readerWasBusy || readerBusy();
    readerWasBusy = readerBusy();
    if (request.complete || excused) return;
    if (received < (rule.minBytesPerSecond * rule.windowMs) / 1000)
      request.destroy(new SlowClientError(rule.minBytesPerSecond, rule.windowMs));
  }, rule.windowMs);
  timer.unref();
  return () => clearInterval(timer);
}
