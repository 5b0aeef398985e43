import net from 'node:net';

/**
 * A TCP proxy on a loopback port in front of `target`, which a test can cut (every connection closed, new ones
 * refused) and restore on the same port: a database outage as the client sees it, without touching the server.
 */
export interface TcpProxy {
  readonly port: number;
  /** `url` with its host and port replaced by the proxy's. */
  through(url: string): string;
  cut(): Promise<void>;
  /**
   * Closes every connection and takes each new one only to close it at once, counting them in `refused`: a
   * server that drops whatever comes, whose every attempt the test can count.
   */
  refuse(): void;
  readonly refused: number;
  /** Back to forwarding, on the same port, after `cut` or `refuse`. */
  restore(): Promise<void>;
  close(): Promise<void>;
}

export async function startTcpProxy(target: { host: string; port: number }): Promise<TcpProxy> {
  const sockets = new Set<net.Socket>();
  const track = (socket: net.Socket) => {
    sockets.add(socket);
    socket.on('error', () => {});
    socket.once('close', () => sockets.delete(socket));
  };
  let refusing = false;
  let refused = 0;
  let server = listening();
  const port = await new Promise<number>((resolve) =>
    server.listen(0, '127.0.0.1', () => resolve((server.address() as net.AddressInfo).port)),
  );

  function listening(): net.Server {
    return net.createServer((client) => {
      if (refusing) {
        refused++;
        client.on('error', () => {});
        client.destroy();
        return;
      }
      const upstream = net.connect(target.port, target.host);
      track(client);
      track(upstream);
      client.pipe(upstream).pipe(client);
      client.once('close', () => upstream.destroy());
      upstream.once('close', () => client.destroy());
    });
  }

  const cut = async () => {
    await new Promise<void>((resolve) => {
      server.close(() => resolve());
      for (const socket of sockets) socket.destroy();
    });
  };
  return {
    port,
    through(url) {
      const proxied = new URL(url);
      proxied.hostname = '127.0.0.1';
      proxied.port = String(port);
      return proxied.toString();
    },
    cut,
    refuse() {
      refusing = true;
      for (const socket of sockets) socket.destroy();
    },
    get refused() {
      return refused;
    },
    async restore() {
      refusing = false;
      if (server.listening) return;
      server = listening();
      await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', () => resolve()));
    },
    close: () => (server.listening ? cut() : Promise.resolve()),
  };
}
