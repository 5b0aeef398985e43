import { createServer, type RequestListener, type Server } from 'node:http';
import type { Socket } from 'node:net';

/**
 * What a client on the public internet may hold of a listener. Node's defaults leave a header trickled one byte a
 * second uncut once requestTimeout is 0, and take connections until the process runs out of file descriptors.
 */
export interface ListenerLimits {
  /** The whole request head must have arrived within this. */
  readonly headersTimeoutMs: number;
  /** A whole request, body included: long enough for the largest export on a slow line. */
  readonly requestTimeoutMs: number;
  /** Connections open at once (RECON_MAX_CONNECTIONS); past it a new connection is closed at once. */
  readonly maxConnections: number;
  /**
   * Connections open at once from one client address (RECON_MAX_CONNECTIONS_PER_CLIENT; 0: no such bound, for a
   * listener behind a proxy, where every client has the proxy's address): one host cannot take every connection.
   */
  readonly maxConnectionsPerClient: number;
  /** A connection on which no byte moves either way for this long is closed. */
  readonly idleTimeoutMs: number;
}

export const DEFAULT_LISTENER_LIMITS: ListenerLimits = {
  headersTimeoutMs: 20_000,
  requestTimeoutMs: 3600_000,
  maxConnections: 256,
  maxConnectionsPerClient: 64,
  idleTimeoutMs: 60_000,
};

/** An HTTP server that enforces `limits`; every recon listener (the receiver, the sandbox) is one. */
export function createBoundedServer(
  listener: RequestListener,
  limits: ListenerLimits = DEFAULT_LISTENER_LIMITS,
): Server {
  const server = createServer(
    {
      headersTimeout: limits.headersTimeoutMs,
      requestTimeout: limits.requestTimeoutMs,
      keepAliveTimeout: 5_000,
      // How often Node looks for heads and requests past their timeout: a trickler is cut within a few seconds of it.
      connectionsCheckingInterval: Math.min(5_000, limits.headersTimeoutMs),
    },
    (request, response) => {
      // From birth: a request or response that fails (its client reset the connection) must not become an
      // uncaught 'error' event, whatever the listener does. It sees the failure through 'close' and `complete`.
      request.on('error', () => {});
      response.on('error', () => {});
      listener(request, response);
    },
  );
  server.maxConnections = limits.maxConnections;
  server.setTimeout(limits.idleTimeoutMs);
  if (limits.maxConnectionsPerClient > 0) boundConnectionsPerClient(server, limits.maxConnectionsPerClient);
  return server;
}

function boundConnectionsPerClient(server: Server, bound: number): void {
  const open = new Map<string, number>();
  server.on('connection', (socket: Socket) => {
    const client = socket.remoteAddress ?? '';
    const count = (open.get(client) ?? 0) + 1;
    if (count > bound) return void socket.destroy();
    open.set(client, count);
    socket.once('close', () => {
      const left = open.get(client)! - 1;
      if (left === 0) open.delete(client);
      else open.set(client, left);
    });
  });
}

/** Listens on `host:port` (0: a free port); rejects with the listen error (EADDRINUSE...) instead of emitting it. */
export function listen(server: Server, port: number, host: string): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
}
