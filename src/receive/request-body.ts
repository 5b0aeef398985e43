import type { IncomingMessage } from 'node:http';
import type { Readable } from 'node:stream';
import { ClientGoneError } from './refusal.ts';

/**
 * Hands every piece of `stream` to `onPiece`, reading on only once its promise settles (backpressure), and
 * resolves at the stream's end. Rejects with the stream's error, with `onPiece`'s, or with ClientGoneError when the
 * stream closes before its end. Listens for errors from the first moment, and on a rejection stops reading without
 * destroying the stream: a request must stay open for its refusal to be answered.
 */
export function pumpStream(stream: Readable, onPiece: (piece: Buffer) => void | Promise<void>): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    let settled = false;
    let ended = false;
    // The piece being handled: the end waits for it, since it may still refuse the body (a limit).
    let inFlight: Promise<void> = Promise.resolve();
    const settle = (): boolean => {
      if (settled) return false;
      settled = true;
      stream.off('data', onData);
      stream.pause();
      return true;
    };
    const finish = () => {
      if (settle()) resolve();
    };
    const fail = (error: unknown) => {
      if (settle()) reject(error);
    };
    const onData = (piece: Buffer) => {
      let pending: void | Promise<void>;
      try {
        pending = onPiece(piece);
      } catch (error) {
        return fail(error);
      }
      if (!pending) return;
      stream.pause();
      inFlight = pending.then(() => {
        if (!settled && !ended) stream.resume();
      });
      inFlight.catch(fail);
    };
    // A request whose client reset the connection errors with ECONNRESET ('aborted'): that is the client gone.
    const failed = (error: NodeJS.ErrnoException) => fail(error.code === 'ECONNRESET' ? new ClientGoneError() : error);
    stream.on('error', failed);
    // It may have failed or ended before it was handed over, its events gone with it.
    if (stream.errored) return failed(stream.errored);
    if (stream.readableEnded) return finish();
    if (stream.destroyed) return fail(new ClientGoneError());
    stream.on('data', onData);
    stream.once('end', () => {
      ended = true;
      inFlight.then(finish, fail);
    });
    stream.once('close', () => {
      if (!ended) fail(new ClientGoneError());
    });
  });
}

/** Calls `stop` if the sender goes away before the end of its body, or went away already. */
export function whenClientGone(request: IncomingMessage, stop: (error: ClientGoneError) => void): void {
  if (request.destroyed) {
    if (!request.complete) process.nextTick(stop, new ClientGoneError());
    return;
  }
  request.once('close', () => {
    if (!request.complete) stop(new ClientGoneError());
  });
}

/** `type/subtype` of a Content-Type header, in lower case, without parameters; null when absent. */
export function mediaType(header: string | undefined): string | null {
  const type = header?.split(';', 1)[0]!.trim().toLowerCase();
  return type ? type : null;
}
