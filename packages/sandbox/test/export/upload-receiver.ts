import { createServer } from 'node:http';
import busboy from 'busboy';
import { createArrivals } from '../support/arrivals.ts';
import { closeServer, listenOnLoopback } from '../support/loopback.ts';

export interface UploadedFile {
  readonly field: string;
  readonly filename: string;
  readonly mimeType: string;
  readonly bytes: Buffer;
}

export interface ReceivedUpload {
  /** The request's path and query. */
  readonly url: string;
  readonly contentType: string | undefined;
  readonly fields: Record<string, string>;
  readonly files: UploadedFile[];
  /** The whole body of a request that is not multipart (a raw delivery); undefined for a multipart one. */
  readonly body: Buffer | undefined;
  readonly status: number;
}

export interface UploadReceiver {
  /** Base URL, e.g. `http://127.0.0.1:41234`; short enough for CALLBACKURL's 32 characters with a path. */
  readonly url: string;
  /** Every request in arrival order, failed ones included. */
  readonly received: ReceivedUpload[];
  /** The next `count` requests are answered 503 after their body is read. */
  failNext(count: number): void;
  /** Resolves once `count` requests have been answered in all, failed ones included. */
  receivedCount(count: number): Promise<void>;
  close(): Promise<void>;
}

/**
 * A merchant's export callback endpoint on loopback: multipart/form-data uploads are read with busboy, any other
 * body is kept whole as a raw delivery.
 */
export async function startUploadReceiver(): Promise<UploadReceiver> {
  let failuresLeft = 0;
  const received: ReceivedUpload[] = [];
  const arrivals = createArrivals();
  const server = createServer((request, response) => {
    const fields: Record<string, string> = {};
    const files: UploadedFile[] = [];
    const answer = () => {
      const fail = failuresLeft > 0;
      if (fail) failuresLeft -= 1;
      return fail ? 503 : 200;
    };
    const reply = (status: number, body?: Buffer) => {
      received.push({
        url: request.url ?? '',
        contentType: request.headers['content-type'],
        fields,
        files,
        body,
        status,
      });
      arrivals.notify();
      response.writeHead(status, { 'content-type': 'text/plain' }).end(status === 200 ? 'OK' : 'try later');
    };
    if (!request.headers['content-type']?.startsWith('multipart/')) {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      return void request.on('end', () => reply(answer(), Buffer.concat(chunks)));
    }
    let parser: busboy.Busboy;
    try {
      parser = busboy({ headers: request.headers });
    } catch {
      request.resume();
      return void request.on('end', () => reply(400));
    }
    parser.on('field', (name, value) => (fields[name] = value));
    parser.on('file', (field, stream, info) => {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', () =>
        files.push({ field, filename: info.filename ?? '', mimeType: info.mimeType, bytes: Buffer.concat(chunks) }),
      );
    });
    parser.on('close', () => reply(answer()));
    parser.on('error', () => reply(400));
    request.pipe(parser);
  });
  return {
    url: await listenOnLoopback(server),
    received,
    failNext: (count) => (failuresLeft = count),
    receivedCount: (count) => arrivals.until(() => received.length >= count),
    close: () => closeServer(server),
  };
}
