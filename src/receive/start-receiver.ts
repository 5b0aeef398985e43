import type { AddressInfo } from 'node:net';
import { listenFailure } from '../config/listen-failure.ts';
import { createBoundedServer, DEFAULT_LISTENER_LIMITS, listen, type ListenerLimits } from '@recon/protocol';
import { createReceiver, type ReceiverOptions } from './receiver.ts';

export interface StartReceiverOptions extends ReceiverOptions {
  /** RECON_HOST. */
  readonly host: string;
  /** RECON_PORT; 0 picks a free port. */
  readonly port: number;
  /** Timeouts and the bound on connections (RECON_MAX_CONNECTIONS). */
  readonly listenerLimits?: Partial<ListenerLimits>;
}

export interface RunningReceiver {
  /** `http://host:port`. */
  readonly url: string;
  readonly port: number;
  /** Resolves once the requests in flight now, and any that arrive meanwhile, have finished; keeps accepting. */
  idle(): Promise<void>;
  /**
   * Stops accepting connections and resolves once the requests in flight have finished: uploads are stored and
   * answered, onDelivered calls return. After `forceAfterMs` the connections still open are cut, and what they
   * were uploading rolls back.
   */
  close(options?: { readonly forceAfterMs?: number }): Promise<void>;
}

export async function startReceiver(options: StartReceiverOptions): Promise<RunningReceiver> {
  const receiver = createReceiver(options);
  const server = createBoundedServer(receiver.handle, { ...DEFAULT_LISTENER_LIMITS, ...options.listenerLimits });
  await listen(server, options.port, options.host).catch((error: unknown) => {
    throw listenFailure(error, {
      host: options.host,
      port: options.port,
      hostVariable: 'RECON_HOST',
      portVariable: 'RECON_PORT',
      hostFlag: '--host',
      portFlag: '--port',
    });
  });
  const { port } = server.address() as AddressInfo;
  const host = options.host.includes(':') ? `[${options.host}]` : options.host;
  return {
    url: `http://${host}:${port}`,
    port,
    idle: () => receiver.drain(),
    async close(closeOptions = {}) {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      const force =
        closeOptions.forceAfterMs === undefined
          ? undefined
          : setTimeout(() => server.closeAllConnections(), closeOptions.forceAfterMs);
      try {
        await receiver.drain();
        // Connections that became idle once their last answer was sent would otherwise wait out their keep-alive.
        server.closeIdleConnections();
        await closed;
      } finally {
        clearTimeout(force);
      }
    },
  };
}
