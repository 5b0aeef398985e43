import http from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * What the network does to one export delivery on its way from the service to recon's receiver. `pass` forwards it;
 * `drop` loses it (the service believes it delivered); `duplicate` forwards it twice; `hold` keeps it until a later
 * step releases it (delayed past the next night, or reordered after later ones); `abort` forwards half of it and cuts
 * the connection, and the service, whose request broke too, sends it again; `forge` appends a stranger's rows to it;
 * `late` holds it like `hold` and lets the service change meanwhile (`onLate`), so that released after a newer export
 * of the same orders, it carries older data.
 */
export type DeliveryFate = 'pass' | 'drop' | 'duplicate' | 'hold' | 'late' | 'abort' | 'forge';

/** What decides a delivery's fate: the export it carries, and how many times the service has tried to send it. */
export interface DeliveryKey {
  readonly token: string;
  readonly attempt: number;
}

export interface Network {
  /** The base of every CALLBACKURL: the proxy, which forwards to the receiver. */
  readonly url: string;
  /** Deliveries held so far and not released. */
  held(): number;
  /** Forwards every held delivery, the latest first: late, and out of order. */
  releaseHeld(): Promise<void>;
  /** Resolves when no delivery is being forwarded (held ones aside). */
  idle(): Promise<void>;
  /** What happened to each delivery, in order, for the step's log. */
  readonly log: string[];
  close(): Promise<void>;
}

interface Upload {
  readonly method: string;
  readonly path: string;
  readonly headers: http.IncomingHttpHeaders;
  readonly body: Buffer;
}

/**
 * A loopback HTTP proxy in front of recon's receiver, where the simulation plays the network: every upload to a
 * token path meets the fate `decide` gives it (from the seed, never from timing); anything else (the callback probe)
 * passes. Bodies are small (a night's export), so each is read whole before its fate is played.
 */
export async function startNetwork(
  receiverUrl: string,
  decide: (key: DeliveryKey) => Promise<DeliveryFate>,
  forge: (token: string, body: Buffer) => Promise<Buffer>,
  onLate: (token: string) => Promise<void>,
): Promise<Network> {
  const target = new URL(receiverUrl);
  const attempts = new Map<string, number>();
  const held: Upload[] = [];
  const inFlight = new Set<Promise<unknown>>();
  const log: string[] = [];

  const forward = (upload: Upload, cutHalfway = false) =>
    new Promise<{ status: number; body: Buffer }>((resolve) => {
      const request = http.request(
        { host: target.hostname, port: target.port, method: upload.method, path: upload.path, headers: upload.headers },
        (response) => {
          const chunks: Buffer[] = [];
          response.on('data', (chunk: Buffer) => chunks.push(chunk));
          response.on('end', () => resolve({ status: response.statusCode ?? 502, body: Buffer.concat(chunks) }));
          response.on('error', () => resolve({ status: 502, body: Buffer.alloc(0) }));
        },
      );
      request.on('error', () => resolve({ status: 502, body: Buffer.alloc(0) }));
      if (!cutHalfway) {
        request.end(upload.body);
        return;
      }
      // Half the bytes, then the connection is gone: the receiver sees an upload cut short.
      request.write(upload.body.subarray(0, Math.floor(upload.body.length / 2)), () => {
        setImmediate(() => {
          request.destroy();
          resolve({ status: 0, body: Buffer.alloc(0) });
        });
      });
    });

  const track = <T>(work: Promise<T>): Promise<T> => {
    inFlight.add(work);
    void work.finally(() => inFlight.delete(work));
    return work;
  };

  const server = http.createServer((request, response) => {
    request.on('error', () => response.destroy());
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const upload: Upload = {
        method: request.method ?? 'POST',
        path: request.url ?? '/',
        headers: request.headers,
        body: Buffer.concat(chunks),
      };
      // A fate that cannot be played (the simulation's own database read failed) is a network error: the service
      // sends the file again.
      void track(play(upload, response).catch(() => response.destroy()));
    });
  });

  async function play(upload: Upload, response: http.ServerResponse): Promise<void> {
    const token = /^\/([0-9A-Za-z]{8,})$/.exec(upload.path)?.[1];
    if (upload.method !== 'POST' || token === undefined) {
      const answer = await forward(upload);
      response.writeHead(answer.status || 502).end(answer.body);
      return;
    }
    const attempt = (attempts.get(token) ?? 0) + 1;
    attempts.set(token, attempt);
    const fate = await decide({ token, attempt });
    log.push(`${token}#${attempt}: ${fate}`);
    const ok = () => response.writeHead(200, { 'content-type': 'text/plain' }).end('OK');
    switch (fate) {
      case 'drop':
        ok();
        return;
      case 'hold':
        held.push(upload);
        ok();
        return;
      case 'late':
        held.push(upload);
        ok();
        await onLate(token);
        return;
      case 'abort':
        await forward(upload, true);
        // The service's own connection broke too: it sends the file again.
        response.destroy();
        return;
      case 'duplicate': {
        const first = await forward(upload);
        await forward(upload);
        response.writeHead(first.status || 502).end(first.body);
        return;
      }
      case 'forge': {
        const body = await forge(token, upload.body);
        const answer = await forward({
          ...upload,
          body,
          headers: { ...upload.headers, 'content-length': String(body.length) },
        });
        response.writeHead(answer.status || 502).end(answer.body);
        return;
      }
      case 'pass': {
        const answer = await forward(upload);
        response.writeHead(answer.status || 502).end(answer.body);
        return;
      }
    }
  }

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const idle = async () => {
    while (inFlight.size > 0) await Promise.allSettled([...inFlight]);
  };
  return {
    url: `http://127.0.0.1:${port}/`,
    held: () => held.length,
    async releaseHeld() {
      const late = held.splice(0).reverse();
      for (const upload of late) {
        const answer = await track(forward(upload));
        log.push(`${upload.path.slice(1)} released late: HTTP ${answer.status}`);
      }
    },
    idle,
    log,
    async close() {
      held.length = 0;
      await idle();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
  };
}
