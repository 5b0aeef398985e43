import type { PgBoss } from 'pg-boss';
import { DEFAULT_DRAIN_SECONDS } from '../../src/config/config.ts';
import type { Database } from '../../src/db/database.ts';
import { silentLogger, type Logger } from '../../src/log/logger.ts';
import { openJobQueue, QUEUES, sendIngestJobs } from '../../src/queue/job-queue.ts';
import { logReceiverEvent } from '../../src/receive/log-receiver-event.ts';
import { startReceiver, type RunningReceiver, type StartReceiverOptions } from '../../src/receive/start-receiver.ts';
import { startNightlyWorker, type NightlyWorkerOptions, type RunningWorker } from './nightly-worker.ts';

export interface ReconServicesOptions {
  readonly database: Database;
  /** RECON_JOB_HEARTBEAT_SECONDS. */
  readonly heartbeatSeconds: number;
  /** Where the receiver, the queue and the worker log; nothing is logged when absent. */
  readonly log?: Logger;
  /** A worker taking ingest and nightly-run jobs; none when absent. */
  readonly worker?: Omit<NightlyWorkerOptions, 'callbackBaseUrl' | 'log'>;
  /** The receiver, its stored deliveries enqueued for the workers; none when absent (`recon worker`). */
  readonly receiver?: Omit<StartReceiverOptions, 'db' | 'callbackBaseUrl' | 'onDelivered' | 'onEvent'>;
  /**
   * RECON_CALLBACK_BASE_URL. Absent: the receiver's own URL with the path `/`, for a receiver on a loopback port
   * chosen at start (the demo, tests), which the service reaches directly.
   */
  readonly callbackBaseUrl?: string;
  /**
   * Told when the receiver has enqueued a delivery's ingest, as this process's own worker is woken: a worker of this
   * process on a queue instance of its own (the simulation's) wakes too, instead of finding the job at its next poll.
   */
  readonly onIngestQueued?: () => void;
}

export interface ReconServices {
  readonly boss: PgBoss;
  readonly receiver: RunningReceiver | undefined;
  /** The base every CALLBACKURL the workers send starts with. */
  readonly callbackBaseUrl: string;
  /**
   * Stops in the order that loses nothing: the sweep, then the receiver (uploads in flight are stored and
   * answered), then the queue (`graceful`: the jobs in progress finish first), within `drainMs` in all: a third
   * for the uploads, the rest for the jobs, after which what is still running is cut (and rolls back).
   */
  close(options?: { readonly graceful?: boolean; readonly drainMs?: number }): Promise<void>;
}

/** Long enough for a 5-digit port: the base `http://127.0.0.1:PPPPP/` still leaves 9 token characters. */
const LOOPBACK_BASE_FOR_CHECKS = 'http://127.0.0.1:65535/';

/**
 * The queue, and the receiver and a worker around it: what `recon serve`, `recon worker` and the demo run. The
 * receiver binds its port first, so that a port in use fails the start before anything else is set going; a start
 * that fails stops whatever it had started, so that nothing keeps polling a database the caller is about to close.
 */
export async function startReconServices(options: ReconServicesOptions): Promise<ReconServices> {
  const { database } = options;
  const log = options.log ?? silentLogger;
  let boss: PgBoss | undefined;
  let receiver: RunningReceiver | undefined;
  let worker: RunningWorker | undefined;
  // A delivery stored before the queue is up waits for it; if the queue never comes up, the sweep of the next
  // start enqueues the delivery.
  let queueReady: (boss: PgBoss) => void = () => {};
  let queueFailed: (error: unknown) => void = () => {};
  const queue = new Promise<PgBoss>((resolve, reject) => {
    queueReady = resolve;
    queueFailed = reject;
  });
  queue.catch(() => {});
  const close = async ({ graceful = true, drainMs = DEFAULT_DRAIN_SECONDS * 1000 } = {}) => {
    const started = Date.now();
    await worker?.stop();
    await receiver?.close({ forceAfterMs: graceful ? drainMs / 3 : 1_000 });
    await boss?.stop({ graceful, close: false, timeout: Math.max(1_000, drainMs - (Date.now() - started)) });
  };
  try {
    if (options.receiver) {
      receiver = await startReceiver({
        ...options.receiver,
        db: database.db,
        callbackBaseUrl: options.callbackBaseUrl ?? LOOPBACK_BASE_FOR_CHECKS,
        onDelivered: async (deliveryId) => {
          await sendIngestJobs(await queue, [deliveryId]);
          worker?.wake(QUEUES.ingestDelivery);
          options.onIngestQueued?.();
        },
        onEvent: (event) => logReceiverEvent(log, event),
      });
    }
    if (!options.callbackBaseUrl && !receiver)
      throw new Error('startReconServices: a worker without a receiver needs RECON_CALLBACK_BASE_URL');
    boss = await openJobQueue(database, {
      heartbeatSeconds: options.heartbeatSeconds,
      // An error as `err: {code, message}`, never the stack pg-boss copies into its plain objects.
      onError: (error) => log.error({ err: error }, 'job queue error'),
    });
    queueReady(boss);
    const callbackBaseUrl = options.callbackBaseUrl ?? `${receiver!.url}/`;
    if (options.worker)
      worker = await startNightlyWorker(boss, database, {
        ...options.worker,
        callbackBaseUrl,
        log,
      });
    return { boss, receiver, callbackBaseUrl, close };
  } catch (error) {
    queueFailed(error);
    await close({ graceful: false }).catch(() => {});
    throw error;
  }
}
