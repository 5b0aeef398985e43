import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Kysely } from 'kysely';
import type { Schema } from '../db/schema.ts';
import type { SigningAccount } from '../notifications/check-notification-hash.ts';
import { ReconError } from '../errors.ts';
import type { MetricsRegistry } from '../metrics/metrics-registry.ts';
import { callbackEndpoint } from './callback-url.ts';
import { createConcurrencyGate } from './concurrency-gate.ts';
import { handleDelivery } from './delivery-handler.ts';
import { handleNotification } from './notification-handler.ts';
import type { ReceiverContext } from './receiver-context.ts';
import type { ReceiverEvent } from './receiver-event.ts';
import { registerReceiverMetrics } from './receiver-metrics.ts';
import { answerEarly } from './respond.ts';
import { DEFAULT_SLOW_CLIENT_RULE, type SlowClientRule } from './slow-client-guard.ts';

export interface ReceiverOptions {
  readonly db: Kysely<Schema>;
  /**
   * The merchant's accounts (RECON_ACCOUNTS, or RECON_IDENTIFIER and RECON_SECRET): each notification is checked with
   * the secret of the account its IDENTIFIER names.
   */
  readonly accounts: readonly SigningAccount[];
  /** RECON_CALLBACK_BASE_URL: deliveries are taken under its path. */
  readonly callbackBaseUrl: string;
  /** RECON_MAX_FILE_BYTES: a larger delivery is refused with 413. */
  readonly maxFileBytes: number;
  /** RECON_MAX_UPLOADS: deliveries read at once; one more is answered 503 before its body is read. */
  readonly maxUploads?: number;
  /** RECON_MIN_UPLOAD_BYTES_PER_SECOND: a body sent slower is cut. */
  readonly slowClient?: SlowClientRule;
  /** How many pooled connections deliveries and notifications may each hold at once, and how long they wait for one. */
  readonly databaseShare?: DatabaseShare;
  /** Where uploads are spooled (the system's temp folder by default). */
  readonly spoolDirectory?: string;
  /** Called with each newly stored delivery, after it is answered; a failure is counted, never the sender's. */
  readonly onDelivered?: (deliveryId: string) => void | Promise<void>;
  /** Where the receiver counts: the process's registry, served on the admin listener's /metrics. */
  readonly metrics: MetricsRegistry;
  readonly onEvent?: (event: ReceiverEvent) => void;
  /** Expiry of tokens and received_at of deliveries and notifications. Default: the system clock. */
  readonly now?: () => Date;
}

export interface DatabaseShare {
  readonly deliveries: number;
  readonly notifications: number;
  readonly waitMs: number;
}

/**
 * Of the 10 pooled connections (open-database.ts), deliveries and notifications hold at most 3 each: the job
 * queue's polling and heartbeats and the worker's ingest keep the rest whatever arrives.
 */
export const DEFAULT_DATABASE_SHARE: DatabaseShare = { deliveries: 3, notifications: 3, waitMs: 10_000 };
export const DEFAULT_MAX_UPLOADS = 8;

export interface Receiver {
  /** The request listener, for node:http's createServer (startReceiver does that). */
  readonly handle: (request: IncomingMessage, response: ServerResponse) => void;
  /** Resolves once every request in flight, onDelivered calls included, is done. */
  drain(): Promise<void>;
}

/**
 * recon serve's public HTTP side: POST <callback path><token> takes export deliveries, GET and POST /notify take
 * notifications; anything else is 404 (/healthz and /metrics are on the admin listener, off the internet).
 * Refuses to start (ReconError CONFIG) with a callback base URL that leaves fewer than 8 token characters or
 * without an account.
 */
export function createReceiver(options: ReceiverOptions): Receiver {
  const endpoint = callbackEndpoint(options.callbackBaseUrl);
  if (options.accounts.length === 0 || options.accounts.some((account) => !account.secret)) {
    throw new ReconError(
      'CONFIG',
      'RECON_ACCOUNTS (or RECON_IDENTIFIER and RECON_SECRET) is required to check the HASH of notifications',
    );
  }
  const onEvent = options.onEvent;
  const share = options.databaseShare ?? DEFAULT_DATABASE_SHARE;
  const ctx: ReceiverContext = {
    db: options.db,
    accounts: options.accounts,
    spool: {
      maxBytes: options.maxFileBytes,
      slowClient: options.slowClient ?? DEFAULT_SLOW_CLIENT_RULE,
      ...(options.spoolDirectory ? { directory: options.spoolDirectory } : {}),
    },
    uploads: createConcurrencyGate('uploads', options.maxUploads ?? DEFAULT_MAX_UPLOADS),
    deliveryQueries: createConcurrencyGate('deliveries', share.deliveries, { waitMs: share.waitMs }),
    notificationQueries: createConcurrencyGate('notifications', share.notifications, { waitMs: share.waitMs }),
    now: options.now ?? (() => new Date()),
    metrics: registerReceiverMetrics(options.metrics),
    onDelivered: options.onDelivered ?? (() => {}),
    emit: (event) => {
      try {
        onEvent?.(event);
      } catch {
        // A faulty log listener must not fail a request.
      }
    },
  };
  const inFlight = new Set<Promise<void>>();

  async function route(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const target = request.url ?? '';
    // Origin-form only: `//host/x` must stay a path, not become another host.
    if (!target.startsWith('/')) return answerEarly(request, response, 400, 'bad request target');
    const url = new URL(`http://receiver${target}`);
    const method = request.method ?? '';
    switch (url.pathname) {
      case '/notify':
        if (method === 'GET' || method === 'POST') return handleNotification(ctx, request, response);
        return answerEarly(request, response, 405, `${method} not allowed on /notify`, { allow: 'GET, POST' });
      // Named here because under a callback path of `/` they would read as delivery URLs and answer 405: a scraper
      // still pointed at the public port should be told plainly that nothing is there.
      case '/healthz':
      case '/metrics':
        return answerEarly(request, response, 404, 'not found: served on the admin listener (RECON_ADMIN_PORT)');
    }
    if (url.pathname.startsWith(endpoint.path) && url.pathname.length > endpoint.path.length) {
      if (method === 'POST') return handleDelivery(ctx, request, response, url.pathname.slice(endpoint.path.length));
      return answerEarly(request, response, 405, `${method} not allowed on a delivery URL`, { allow: 'POST' });
    }
    answerEarly(request, response, 404, 'not found');
  }

  return {
    handle(request, response) {
      // From birth: a client that resets its connection fails its request and response, never the process.
      request.on('error', () => {});
      response.on('error', () => {});
      const work = route(request, response).catch((error: unknown) => {
        ctx.emit({ type: 'internal-error', path: request.url ?? '', error });
        answerEarly(request, response, 500, 'internal error');
      });
      inFlight.add(work);
      // work never rejects: route's failures become the 500 above.
      void work.finally(() => inFlight.delete(work));
    },
    async drain() {
      while (inFlight.size > 0) await Promise.all(inFlight);
    },
  };
}
