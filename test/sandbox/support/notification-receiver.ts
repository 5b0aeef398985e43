import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReceivedNotification {
  readonly contentType: string | undefined;
  readonly body: string;
  readonly answeredOk: boolean;
}

export interface NotificationReceiver {
  readonly url: string;
  /** Every POST received, refused ones included, in arrival order. */
  readonly received: ReceivedNotification[];
  /** The bodies that were acknowledged with OK. */
  accepted(): string[];
  close(): Promise<void>;
}

/**
 * A merchant's notification endpoint on loopback. It answers the first `refuseFirst` requests with a body
 * other than OK (alternating a 500 and a 200 that says something else), then `OK`.
 */
export async function startNotificationReceiver(options: { refuseFirst?: number } = {}): Promise<NotificationReceiver> {
  let refusalsLeft = options.refuseFirst ?? 0;
  const received: ReceivedNotification[] = [];
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const refuse = refusalsLeft > 0;
      if (refuse) refusalsLeft -= 1;
      received.push({ contentType: request.headers['content-type'], body: Buffer.concat(chunks).toString('utf8'), answeredOk: !refuse });
      if (!refuse) return void response.end('OK');
      const status = refusalsLeft % 2 === 0 ? 500 : 200;
      response.writeHead(status).end(status === 500 ? 'temporarily broken' : 'NOT OK');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/notify`,
    received,
    accepted: () => received.filter((r) => r.answeredOk).map((r) => r.body),
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
