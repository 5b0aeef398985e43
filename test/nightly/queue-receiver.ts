import type { PgBoss } from 'pg-boss';
import { loadConfig } from '../../src/config/config.ts';
import type { Database } from '../../src/db/database.ts';
import { createMetricsRegistry } from '../../src/metrics/metrics-registry.ts';
import { startReconServices } from '../../pipelines/nightly/recon-services.ts';
import type { RunningReceiver } from '../../src/receive/start-receiver.ts';
import { IDENTIFIER } from './nightly-harness.ts';

/**
 * recon serve's receiving half in the test's process: deliveries are stored and their ingest enqueued, and no
 * worker runs here, so the work is left to the `recon worker` processes a test starts.
 */
export interface QueueReceiver {
  readonly boss: PgBoss;
  readonly receiver: RunningReceiver;
  /** RECON_CALLBACK_BASE_URL for this receiver: its URL with the path `/`. */
  readonly callbackBaseUrl: string;
  close(): Promise<void>;
}

export async function startQueueReceiver(
  database: Database,
  options: { secret: string; heartbeatSeconds: number },
): Promise<QueueReceiver> {
  const services = await startReconServices({
    database,
    heartbeatSeconds: options.heartbeatSeconds,
    receiver: {
      host: '127.0.0.1',
      port: 0,
      accounts: [{ identifier: IDENTIFIER, secret: options.secret }],
      maxFileBytes: loadConfig({}).limits.maxFileBytes,
      metrics: createMetricsRegistry(),
    },
  });
  return {
    boss: services.boss,
    receiver: services.receiver!,
    callbackBaseUrl: services.callbackBaseUrl,
    close: () => services.close({ graceful: false }),
  };
}
