import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Kysely } from 'kysely';
import { createBoundedServer, listen, type ListenerLimits } from '@recon/protocol';
import type { Schema } from '../db/schema.ts';
import { listenFailure } from '../config/listen-failure.ts';
import type { MetricsRegistry } from '../metrics/metrics-registry.ts';
import { answer, answerEarly } from '../receive/respond.ts';
import { checkDatabase } from './health-check.ts';

export interface AdminListenerOptions {
  /** RECON_ADMIN_HOST: loopback by default, so that only the host (or a sidecar) scrapes. */
  readonly host: string;
  /** RECON_ADMIN_PORT; 0 picks a free port. */
  readonly port: number;
  readonly metrics: MetricsRegistry;
  /** What /healthz checks. */
  readonly db: Kysely<Schema>;
}

export interface AdminListener {
  /** `http://host:port`. */
  readonly url: string;
  readonly port: number;
  /** From now on /healthz answers 503 `shutting down`, so that a balancer stops sending work while the process drains. */
  drain(): void;
  /** Stops listening; a scrape in flight is answered first (within 5 s). */
  close(): Promise<void>;
}

/**
 * An operator's requests are short GETs from a scraper or a probe: no upload to wait for, so a tight bound on
 * each request and few connections. No per-client bound: on loopback every client has the same address.
 */
const ADMIN_LIMITS: ListenerLimits = {
  headersTimeoutMs: 10_000,
  requestTimeoutMs: 30_000,
  maxConnections: 32,
  maxConnectionsPerClient: 0,
  idleTimeoutMs: 60_000,
};

const CLOSE_GRACE_MS = 5_000;

/**
 * The operators' listener of `recon serve` and `recon worker`: GET /metrics (Prometheus text format) and GET
 * /healthz (200 `OK` when the database answers, 503 naming why not, 503 `shutting down` once draining). Kept off
 * the public listener, which faces the payment service and the internet.
 */
export async function startAdminListener(options: AdminListenerOptions): Promise<AdminListener> {
  let draining = false;
  const server = createBoundedServer((request, response) => {
    route(request, response).catch((error: unknown) =>
      answer(response, 500, error instanceof Error ? oneLine(error.message) : String(error)),
    );
  }, ADMIN_LIMITS);

  async function route(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const target = request.url ?? '';
    if (!target.startsWith('/')) return answerEarly(request, response, 400, 'bad request target');
    const { pathname } = new URL(`http://admin${target}`);
    if (pathname !== '/metrics' && pathname !== '/healthz') return answerEarly(request, response, 404, 'not found');
    const method = request.method ?? '';
    if (method !== 'GET' && method !== 'HEAD')
      return answerEarly(request, response, 405, `${method} not allowed on ${pathname}`, { allow: 'GET, HEAD' });
    if (pathname === '/metrics') {
      // A failing gauge fails the scrape (the target shows as down); the error names the metric.
      const text = await options.metrics.metrics();
      return answer(response, 200, text, { 'content-type': options.metrics.contentType });
    }
    if (draining) return answer(response, 503, 'shutting down');
    const health = await checkDatabase(options.db);
    answer(response, health.healthy ? 200 : 503, health.healthy ? 'OK' : health.reason);
  }

  await listen(server, options.port, options.host).catch((error: unknown) => {
    throw listenFailure(error, {
      label: 'admin listener: ',
      host: options.host,
      port: options.port,
      hostVariable: 'RECON_ADMIN_HOST',
      portVariable: 'RECON_ADMIN_PORT',
    });
  });
  const { port } = server.address() as AddressInfo;
  const host = options.host.includes(':') ? `[${options.host}]` : options.host;
  return {
    url: `http://${host}:${port}`,
    port,
    drain() {
      draining = true;
    },
    async close() {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      // A scrape is a few milliseconds: a connection still open after this is a stuck client, not work to wait for.
      const force = setTimeout(() => server.closeAllConnections(), CLOSE_GRACE_MS);
      try {
        await closed;
      } finally {
        clearTimeout(force);
      }
    },
  };
}

function oneLine(text: string): string {
  return text.replace(/\s*\n\s*/g, ' ');
}
