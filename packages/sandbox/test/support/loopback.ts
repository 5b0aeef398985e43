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

/** A base URL where nothing listens (a port just freed), so connecting is refused. */
export async function refusingBaseUrl(): Promise<{ baseUrl: string; port: number }> {
  const server = createServer();
  const baseUrl = await listenOnLoopback(server);
  await closeServer(server);
  return { baseUrl, port: Number(new URL(baseUrl).port) };
}
