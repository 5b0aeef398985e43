import type { IncomingMessage } from 'node:http';

export class BodyTooLargeError extends Error {
  constructor(limitBytes: number) {
    super(`request body larger than ${limitBytes} bytes`);
    this.name = 'BodyTooLargeError';
  }
}

/** The whole body as UTF-8, refusing more than `limitBytes` so one client cannot exhaust memory. */
export async function readBody(request: IncomingMessage, limitBytes: number): Promise<string> {
  const declared = Number(request.headers['content-length']);
  if (declared > limitBytes) throw new BodyTooLargeError(limitBytes);
  const chunks: Buffer[] = [];
  let received = 0;
  for await (const chunk of request as AsyncIterable<Buffer>) {
    received += chunk.length;
    if (received > limitBytes) throw new BodyTooLargeError(limitBytes);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}
