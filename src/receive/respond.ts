import type { IncomingMessage, ServerResponse } from 'node:http';

/** Past this many unread bytes after an early answer, the connection is closed instead of read to its end. */
const DISCARD_LIMIT_BYTES = 1024 * 1024;
/** A body being read out after an early answer must end within this, or its connection is closed. */
const DISCARD_TIMEOUT_MS = 10_000;

/** A plain-text answer: `OK`, or one line saying why not (the service expects the body `OK` exactly). */
export function answer(
  response: ServerResponse,
  status: number,
  text: string,
  headers: Record<string, string> = {},
): void {
  if (response.headersSent || response.destroyed) return;
  response.writeHead(status, {
    'content-type': 'text/plain; charset=utf-8',
    'cache-control': 'no-store',
    ...headers,
    'content-length': Buffer.byteLength(text),
  });
  response.end(text);
}

/**
 * Answers before the request's body has been read (a refusal): the rest of the body is read and dropped, so the
 * sender, still writing, gets the answer instead of a reset connection; a sender with more than
 * DISCARD_LIMIT_BYTES left to send, or that does not say how much (chunked), has its connection closed after the
 * answer, and so does one that has not finished within DISCARD_TIMEOUT_MS.
 */
export function answerEarly(
  request: IncomingMessage,
  response: ServerResponse,
  status: number,
  text: string,
  headers: Record<string, string> = {},
): void {
  request.unpipe();
  const declared = request.headers['content-length'];
  const closeAfter = !request.complete && !(declared !== undefined && Number(declared) <= DISCARD_LIMIT_BYTES);
  answer(response, status, text, closeAfter ? { ...headers, connection: 'close' } : headers);
  if (closeAfter) return;
  // A body received whole is read out too: unread data left in a request can keep its connection from reading the next one.
  let left = DISCARD_LIMIT_BYTES;
  const slow = setTimeout(() => request.socket.destroy(), DISCARD_TIMEOUT_MS).unref();
  request.once('end', () => clearTimeout(slow));
  request.once('close', () => clearTimeout(slow));
  request.on('data', (chunk: Buffer) => {
    left -= chunk.length;
    if (left < 0) request.socket.destroy();
  });
  request.resume();
}
