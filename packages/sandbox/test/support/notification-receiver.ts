import { createServer } from 'node:http';
import { createArrivals } from './arrivals.ts';
import { closeServer, listenOnLoopback } from './loopback.ts';

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
  /** Resolves once `count` requests have been received in all, refused ones included. */
  receivedCount(count: number): Promise<void>;
  /** Resolves once `count` notifications have been acknowledged with OK. */
  acceptedCount(count: number): Promise<void>;
  close(): Promise<void>;
}

/**
 * A merchant's notification endpoint on loopback. It answers the first `refuseFirst` requests with a body
 * other than OK (alternating a 500 and a 200 that says something else), then `OK`.
 */
export async function startNotificationReceiver(options: { refuseFirst?: number } = {}): Promise<NotificationReceiver> {
  let refusalsLeft = options.refuseFirst ?? 0;
  const received: ReceivedNotification[] = [];
  const arrivals = createArrivals();
  const accepted = () => received.filter((r) => r.answeredOk).map((r) => r.body);
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const refuse = refusalsLeft > 0;
      if (refuse) refusalsLeft -= 1;
      received.push({
        contentType: request.headers['content-type'],
        body: Buffer.concat(chunks).toString('utf8'),
        answeredOk: !refuse,
      });
      arrivals.notify();
      if (!refuse) return void response.end('OK');
      const status = refusalsLeft % 2 === 0 ? 500 : 200;
      response.writeHead(status).end(status === 500 ? 'temporarily broken' : 'NOT OK');
    });
  });
  const baseUrl = await listenOnLoopback(server);
  return {
    url: `${baseUrl}/notify`,
    received,
    accepted,
    receivedCount: (count) => arrivals.until(() => received.length >= count),
    acceptedCount: (count) => arrivals.until(() => accepted().length >= count),
    close: () => closeServer(server),
  };
}
