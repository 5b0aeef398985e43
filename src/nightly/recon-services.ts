import type { PgBoss } from 'pg-boss';
import type { Database } from '../db/database.ts';
import { describeError } from '../errors.ts';
import type { MetricsRegistry } from '../metrics/metrics-registry.ts';
import { openJobQueue, QUEUES } from '../queue/job-queue.ts';
import { startReceiver, type RunningReceiver } from '../receive/start-receiver.ts';
import { startNightlyWorker, type NightlyWorkerOptions } from './nightly-worker.ts';

export interface ReconServicesOptions {
  readonly database: Database;
  /** RECON_JOB_HEARTBEAT_SECONDS. */
  readonly heartbeatSeconds: number;
  readonly log?: (message: string) => void;
  /** A worker taking ingest and nightly-run jobs; none when absent. */
  readonly worker?: Omit<NightlyWorkerOptions, 'callbackBaseUrl' | 'log'>;
  /** The receiver, its stored deliveries enqueued for the workers; none when absent (`recon worker`). */
  readonly receiver?: {
    readonly host: string;
    readonly port: number;
    readonly secret: string;
    readonly maxFileBytes: number;
    readonly metrics: MetricsRegistry;
  };
  /**
   * RECON_CALLBACK_BASE_URL. Absent: the receiver's own URL with the path `/`, for a receiver on a loopback port
   * chosen at start (the demo, tests), which the service reaches directly.
   */
  readonly callbackBaseUrl?: string;
}

export interface ReconServices {
  readonly boss: PgBoss;
  readonly receiver: RunningReceiver | undefined;
  /** The base every CALLBACKURL the workers send starts with. */
  readonly callbackBaseUrl: string;
  /**
   * Stops in the order that loses nothing: the sweep, then the receiver (uploads in flight are stored and
   * answered), then the queue (`graceful`: the jobs in progress finish first).
   */
  close(options?: { readonly graceful?: boolean }): Promise<void>;
}

/** Long enough for a 5-digit port: the base `http://127.0.0.1:PPPPP/` still leaves 9 token characters. */
const LOOPBACK_BASE_FOR_CHECKS = 'http://127.0.0.1:65535/';

/** The queue, and the receiver and a worker around it: what `recon serve`, `recon worker` and the demo run. */
export async function startReconServices(options: ReconServicesOptions): Promise<ReconServices> {
  const { database, log } = options;
  const boss = await openJobQueue(database, { heartbeatSeconds: options.heartbeatSeconds, ...(log ? { onError: log } : {}) });
  let receiver: RunningReceiver | undefined;
  if (options.receiver) {
    receiver = await startReceiver({
      ...options.receiver,
      db: database.db,
      callbackBaseUrl: options.callbackBaseUrl ?? LOOPBACK_BASE_FOR_CHECKS,
      onDelivered: async (deliveryId) => {
        await boss.send(QUEUES.ingestDelivery, { deliveryId });
      },
      onEvent: (event) => {
        if (event.type === 'internal-error') log?.(`${event.path}: ${describeError(event.error)}`);
      },
    });
  }
  if (!options.callbackBaseUrl && !receiver) throw new Error('startReconServices: a worker without a receiver needs RECON_CALLBACK_BASE_URL');
  const callbackBaseUrl = options.callbackBaseUrl ?? `${receiver!.url}/`;
  const worker = options.worker ? await startNightlyWorker(boss, database, { ...options.worker, callbackBaseUrl, ...(log ? { log } : {}) }) : undefined;
  return {
    boss,
    receiver,
    callbackBaseUrl,
    async close({ graceful = true } = {}) {
      worker?.stop();
      await receiver?.close({ forceAfterMs: graceful ? 30_000 : 1_000 });
      await boss.stop({ graceful, close: false, timeout: 60_000 });
    },
  };
}
