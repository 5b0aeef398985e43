import type { IncomingMessage } from 'node:http';
import { PassThrough, type Readable } from 'node:stream';
import { ClientGoneError } from './refusal.ts';

/**
 * The request's body as a stream of its own. Leaving a for-await loop destroys the stream it reads, and destroying
 * the request itself would close its socket before a refusal is answered: this one can be left early. It fails with
 * ClientGoneError when the sender goes away before the end.
 */
export function requestBody(request: IncomingMessage): Readable {
  const body = new PassThrough();
  request.pipe(body);
  whenClientGone(request, (error) => body.destroy(error));
  return body;
}

/** Calls `stop` if the sender goes away before the end of its body. */
export function whenClientGone(request: IncomingMessage, stop: (error: ClientGoneError) => void): void {
  request.once('close', () => {
    if (!request.complete) stop(new ClientGoneError());
  });
}

/** `type/subtype` of a Content-Type header, in lower case, without parameters; null when absent. */
export function mediaType(header: string | undefined): string | null {
  const type = header?.split(';', 1)[0]!.trim().toLowerCase();
  return type ? type : null;
}
