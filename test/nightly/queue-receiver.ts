import type { PgBoss } from 'pg-boss';
import { loadConfig } from '../../src/config/config.ts';
import type { Database } from '../../src/db/database.ts';
import { createMetricsRegistry } from '../../src/metrics/metrics-registry.ts';
import { openJobQueue, QUEUES } from '../../src/queue/job-queue.ts';
import { startReceiver, type RunningReceiver } from '../../src/receive/start-receiver.ts';

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

export async function startQueueReceiver(database: Database, options: { secret: string; heartbeatSeconds: number }): Promise<QueueReceiver> {
  const boss = await openJobQueue(database, { heartbeatSeconds: options.heartbeatSeconds });
  const receiver = await startReceiver({
    db: database.db,
    secret: options.secret,
    // Only the path matters to the receiver, and the port is not known yet.
    callbackBaseUrl: 'http://127.0.0.1:1/',
    maxFileBytes: loadConfig({}).limits.maxFileBytes,
    metrics: createMetricsRegistry(),
    host: '127.0.0.1',
    port: 0,
    onDelivered: async (deliveryId) => {
      await boss.send(QUEUES.ingestDelivery, { deliveryId });
    },
  });
  return {
    boss,
    receiver,
    callbackBaseUrl: `${receiver.url}/`,
    async close() {
      await receiver.close({ forceAfterMs: 1_000 });
      await boss.stop({ graceful: false, close: false });
    },
  };
}
