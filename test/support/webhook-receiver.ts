import { createServer, type IncomingMessage } from 'node:http';
import { createArrivals } from './arrivals.ts';
import { closeServer, listenOnLoopback } from './loopback.ts';

export interface WebhookRequest {
  readonly path: string;
  readonly contentType: string | undefined;
  /** The Authorization header, if any: a webhook URL's credentials arrive there. */
  readonly authorization: string | undefined;
  readonly body: Record<string, unknown>;
  /** The status it was answered. */
  readonly status: number;
}

export interface WebhookReceiver {
  /** The URL to set as RECON_ALERT_WEBHOOK: a path with a token in it, as chat tools give. */
  readonly url: string;
  readonly requests: WebhookRequest[];
  /** Resolves once `count` requests have arrived (their bodies read). */
  requestCount(count: number): Promise<void>;
  /**
   * Holds the next request unanswered until the returned `release` is called: a sender caught mid-send, at a
   * known point. `arrived` resolves once that request is being held.
   */
  holdNext(): { arrived: Promise<void>; release: () => void };
  close(): Promise<void>;
}

export const WEBHOOK_TOKEN = 'T0ALERTS/B0RECON/sEcReTtOkEnXyZ';

/**
 * A chat tool's incoming webhook on loopback: takes JSON POSTs on its token's path and answers them with the
 * statuses given in turn (200 once they run out).
 */
export async function startWebhookReceiver(statuses: readonly number[] = []): Promise<WebhookReceiver> {
  const requests: WebhookRequest[] = [];
  const arrivals = createArrivals();
  const answers = [...statuses];
  let hold: { arrived: () => void; released: Promise<void> } | undefined;
  const server = createServer((request, response) => {
    void readBody(request).then(async (text) => {
      const status = answers.shift() ?? 200;
      const held = hold;
      hold = undefined;
      if (held) {
        held.arrived();
        await held.released;
      }
      requests.push({
        path: request.url ?? '',
        contentType: request.headers['content-type'],
        authorization: request.headers.authorization,
        body: JSON.parse(text) as Record<string, unknown>,
        status,
      });
      arrivals.notify();
      response.writeHead(status, { 'content-type': 'text/plain' }).end(status === 200 ? 'ok' : 'no');
    });
  });
  const base = await listenOnLoopback(server);
  return {
    url: `${base}/hooks/${WEBHOOK_TOKEN}?channel=ops`,
    requests,
    requestCount: (count) => arrivals.until(() => requests.length >= count),
    holdNext() {
      let arrived!: () => void;
      let release!: () => void;
      const arrivedPromise = new Promise<void>((resolve) => (arrived = resolve));
      const released = new Promise<void>((resolve) => (release = resolve));
      hold = { arrived, released };
      return { arrived: arrivedPromise, release };
    },
    close: () => closeServer(server),
  };
}

function readBody(request: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = '';
    request.setEncoding('utf8');
    request.on('data', (chunk: string) => (text += chunk));
    request.on('end', () => resolve(text));
    request.on('error', reject);
  });
}
