import { createServer, request as httpRequest, type ClientRequest, type IncomingMessage } from 'node:http';
import type { Database } from '../../src/db/database.ts';
import { createMetricsRegistry, type MetricsRegistry } from '../../src/metrics/metrics-registry.ts';
import { issueExportToken, type ExportTokenRequest, type IssuedExportToken } from '../../src/receive/export-token.ts';
import type { ReceiverEvent } from '../../src/receive/receiver-event.ts';
import { createReceiver, type ReceiverOptions } from '../../src/receive/receiver.ts';
import { createArrivals } from '../support/arrivals.ts';
import { closeServer, listenOnLoopback } from '../support/loopback.ts';

export const IDENTIFIER = 'RECEIVER-SHOP';
export const SECRET = 'receiver-test-secret';

/** A receiver on a loopback port, over a test database, recording what it did. */
export interface TestReceiver {
  /** `http://127.0.0.1:port`. */
  readonly url: string;
  readonly events: ReceiverEvent[];
  /** Every delivery id onDelivered was called with (before the test's own onDelivered, if any). */
  readonly delivered: string[];
  readonly metrics: MetricsRegistry;
  /** Resolves once `condition` holds (checked after each event, onDelivered call and arriving request). */
  until(condition: () => boolean): Promise<void>;
  /** Requests that have reached the receiver's handler so far. */
  readonly arrived: () => number;
  /** An export request with a token whose CALLBACKURL points at this receiver. */
  issue(request?: Partial<ExportTokenRequest>): Promise<IssuedExportToken>;
  close(): Promise<void>;
}

export async function startTestReceiver(
  database: Database,
  options: Partial<ReceiverOptions> = {},
): Promise<TestReceiver> {
  const events: ReceiverEvent[] = [];
  const delivered: string[] = [];
  const arrivals = createArrivals();
  const metrics = options.metrics ?? createMetricsRegistry();
  let arrived = 0;
  const receiver = createReceiver({
    db: database.db,
    accounts: [{ identifier: IDENTIFIER, secret: SECRET }],
    // Only its path matters to the receiver; tokens are issued against the real port below.
    callbackBaseUrl: 'http://127.0.0.1:9/',
    maxFileBytes: 10 * 1024 * 1024,
    metrics,
    ...options,
    onDelivered: (deliveryId) => {
      delivered.push(deliveryId);
      arrivals.notify();
      return options.onDelivered?.(deliveryId);
    },
    onEvent: (event) => {
      events.push(event);
      options.onEvent?.(event);
      arrivals.notify();
    },
  });
  const server = createServer((request, response) => {
    arrived += 1;
    receiver.handle(request, response);
    arrivals.notify();
  });
  const url = await listenOnLoopback(server);
  return {
    url,
    events,
    delivered,
    metrics,
    until: (condition) => arrivals.until(condition),
    arrived: () => arrived,
    issue: (request = {}) =>
      issueExportToken(database.db, {
        callbackBaseUrl: `${url}/`,
        orderIds: ['ORDER-1', 'ORDER-2'],
        compression: 'gzip',
        nightlyRunId: null,
        expiresAt: new Date(Date.now() + 3_600_000),
        ...request,
      }),
    async close() {
      await receiver.drain();
      await closeServer(server);
    },
  };
}

export interface Answer {
  readonly status: number;
  readonly text: string;
  readonly headers: IncomingMessage['headers'];
}

/** One request over a fresh connection (no keep-alive pool between tests). */
export function send(
  url: string,
  options: {
    method?: string;
    headers?: Record<string, string | number>;
    body?: Buffer | string;
    localAddress?: string;
  } = {},
): Promise<Answer> {
  const { request, answer } = open(url, options);
  request.end(options.body);
  return answer;
}

/** A request whose body the test writes bit by bit; `answer` resolves as soon as the server answers. */
export function open(
  url: string,
  options: { method?: string; headers?: Record<string, string | number>; localAddress?: string } = {},
): { request: ClientRequest; answer: Promise<Answer> } {
  const request = httpRequest(url, {
    method: options.method ?? 'POST',
    headers: { connection: 'close', ...options.headers },
    ...(options.localAddress ? { localAddress: options.localAddress } : {}),
  });
  const answer = new Promise<Answer>((resolve, reject) => {
    request.on('error', reject);
    request.on('response', (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () =>
        resolve({
          status: response.statusCode!,
          text: Buffer.concat(chunks).toString('utf8'),
          headers: response.headers,
        }),
      );
    });
  });
  return { request, answer };
}

/** A multipart/form-data body built by hand, so that tests choose every part's name, filename and type. */
export function multipart(
  parts: readonly { name: string; value: string | Buffer; filename?: string; type?: string }[],
): {
  body: Buffer;
  contentType: string;
} {
  const boundary = 'recon-test-boundary-7MA4YWxkTrZu0gW';
  const pieces: Buffer[] = [];
  for (const part of parts) {
    const filename = part.filename === undefined ? '' : `; filename="${part.filename}"`;
    const type = part.type === undefined ? '' : `\r\ncontent-type: ${part.type}`;
    pieces.push(
      Buffer.from(`--${boundary}\r\ncontent-disposition: form-data; name="${part.name}"${filename}${type}\r\n\r\n`),
    );
    pieces.push(Buffer.from(part.value));
    pieces.push(Buffer.from('\r\n'));
  }
  pieces.push(Buffer.from(`--${boundary}--\r\n`));
  return { body: Buffer.concat(pieces), contentType: `multipart/form-data; boundary=${boundary}` };
}
