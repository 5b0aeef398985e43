import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** Starts `server` on a loopback address (a free port by default) and resolves to its base URL, `http://host:port`. */
export async function listenOnLoopback(server: Server, port = 0, host = '127.0.0.1'): Promise<string> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  return `http://${host}:${(server.address() as AddressInfo).port}`;
}

/** Closes `server` and its keep-alive connections, which would otherwise hold the close until they time out. */
export function closeServer(server: Server): Promise<void> {
  return new Promise((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });
}

/**
 * Ports a test hands to a child process to listen on, or uses as a place where nothing listens: below the system's
 * ephemeral range (net.ipv4.ip_local_port_range starts at 32768 on Linux), a block of them for each vitest worker.
 * The kernel never gives one of these to a connection's local end or to a listener on port 0, and no other worker
 * takes from this block, so a port found free stays free until the child listens on it. A port taken from the
 * ephemeral range was free when found, and under load another connection's local end took it before the child
 * listened (EADDRINUSE).
 */
const PORTS_PER_WORKER = 400;
const FIRST_PORT = 20_000;
const WORKER_BLOCKS = 30;
const block = (Math.max(1, Number(process.env.VITEST_POOL_ID ?? 1)) - 1) % WORKER_BLOCKS;
let nextPort = 0;

function isFree(port: number): Promise<boolean> {
  const server = createServer();
  return new Promise((resolve) => {
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

/** A base URL where nothing listens, so connecting is refused, and its port, free for a child to listen on. */
export async function refusingBaseUrl(): Promise<{ baseUrl: string; port: number }> {
  for (let tries = 0; tries < PORTS_PER_WORKER; tries++) {
    const port = FIRST_PORT + block * PORTS_PER_WORKER + (nextPort++ % PORTS_PER_WORKER);
    if (await isFree(port)) return { baseUrl: `http://127.0.0.1:${port}`, port };
  }
  throw new Error(`no free port among the ${PORTS_PER_WORKER} of this test worker's block`);
}
