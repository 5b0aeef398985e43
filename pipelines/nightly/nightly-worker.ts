import type { PgBoss } from 'pg-boss';
import type { Database } from '../../src/db/database.ts';
import { silentLogger, type Logger } from '../../src/log/logger.ts';
import type { MetricsRegistry } from '../../src/metrics/metrics-registry.ts';
import { QUEUES, sendIngestJobs } from '../../src/queue/job-queue.ts';
import { announceWorker } from '../../src/queue/worker-presence.ts';
import { describeProbe, probeCallbackBase } from '../../src/nightly/callback-probe.ts';
import { advanceNightlyRun, type NightlyDependencies } from '../../src/nightly/advance-nightly-run.ts';
import { runNeedsAdvance } from '../../src/nightly/run-after-ingest.ts';
import { sendUnsentRequests } from '../../src/nightly/send-export-requests.ts';
import { ingestDelivery, type IngestDeliveryOptions } from './ingest-delivery.ts';
import { registerWorkerMetrics } from './worker-metrics.ts';

export interface NightlyWorkerOptions extends Omit<
  NightlyDependencies,
  'scheduleAdvance' | 'database' | 'reconcileSeconds'
> {
  readonly ingest: Omit<IngestDeliveryOptions, 'ingestSeconds'>;
  /** The process's registry, where the worker counts its jobs, ingests and reconciliations; none when absent. */
  readonly metrics?: MetricsRegistry;
  /** How often an idle worker looks for jobs (pg-boss's default is 2 s; the demo and tests go faster). */
  readonly pollingIntervalSeconds?: number;
}

/** Sends a job asking for the run to be advanced, at once or at `at`. */
export function advanceSender(boss: PgBoss): (nightlyRunId: string, at?: Date) => Promise<void> {
  return async (nightlyRunId, at) => {
    await boss.send(QUEUES.advanceNightlyRun, { nightlyRunId }, at && at > new Date() ? { startAfter: at } : {});
  };
}

/** How often a worker looks for work a crash left without a job (see resumeUnfinishedWork). */
const SWEEP_MS = 60_000;

export interface RunningWorker {
  /** Has this process's worker of `queue` look for a job now rather than at its next poll. */
  wake(queue: string): void;
  /** Stops the periodic sweep and the worker's presence; the queue's own workers stop with pg-boss. */
  stop(): Promise<void>;
}

/**
 * A worker: takes delivery ingests and nightly-run advances off the queue, one job at a time of each. Several
 * workers in several processes share the queue (pg-boss claims each job for one of them); a job whose worker
 * died is handed out again once its heartbeat lapses, and every job is safe to run twice. At start and every
 * minute it also re-enqueues what a crash may have left without a job. It shows itself in recon.workers, so that
 * `recon nightly --wait` can tell when no worker runs.
 */
export async function startNightlyWorker(
  boss: PgBoss,
  database: Database,
  options: NightlyWorkerOptions,
): Promise<RunningWorker> {
  const log = options.log ?? silentLogger;
  // Shown from the start: a run the worker takes at once is never seen untaken by a worker that exists.
  const presence = await announceWorker(database.db, {
    onError: (error) => log.error({ err: error }, 'worker presence not refreshed'),
  });
  const scheduleAdvance = advanceSender(boss);
  const now = options.now ?? (() => new Date());
  const metrics = options.metrics && registerWorkerMetrics(options.metrics);
  const deps: NightlyDependencies = {
    ...options,
    database,
    scheduleAdvance,
    probeCallbackBase: async (nightlyRunId) => {
      const runLog = log.child({ run: nightlyRunId });
      const result = await probeCallbackBase(database.db, options.callbackBaseUrl, {
        reason: 'nightly run',
        nightlyRunId,
      }).catch((error: unknown) => runLog.error({ err: error }, 'callback probe failed'));
      if (result?.reachable) runLog.info(describeProbe(result));
      else if (result) runLog.error({ detail: result.detail }, describeProbe(result));
    },
    ...(metrics ? { reconcileSeconds: metrics.reconcileSeconds } : {}),
  };
  const polling = { pollingIntervalSeconds: options.pollingIntervalSeconds ?? 2 };
  // pg-boss's worker waits out its polling interval after every job, even with more jobs waiting: one file per
  // interval and worker. A worker that has just done a job looks for the next at once, and waits only when it
  // finds none; a job this process sends wakes its own worker of that queue (others find it when they poll).
  const workerIds = new Map<string, string>();
  const wake = (queue: string) => {
    const workerId = workerIds.get(queue);
    if (workerId) boss.notifyWorker(workerId);
  };
  const reported =
    <T>(queue: string, handler: (data: T, log: Logger) => Promise<void>) =>
    async ([job]: { id: string; data: T }[]) => {
      const jobLog = log.child({ job: job!.id });
      try {
        await handler(job!.data, jobLog);
      } catch (error) {
        metrics?.jobs.inc({ queue, outcome: 'failed' });
        jobLog.error({ queue, err: error }, `${queue} job failed (it will be retried)`);
        throw error;
      }
      metrics?.jobs.inc({ queue, outcome: 'completed' });
      wake(queue);
    };
  const work = async <T extends object>(
    queue: string,
    handler: (data: T, log: Logger) => Promise<void>,
  ): Promise<void> => {
    workerIds.set(queue, await boss.work<T>(queue, polling, reported(queue, handler)));
  };
  await work<{ deliveryId: string }>(QUEUES.ingestDelivery, async (data: { deliveryId: string }, jobLog) => {
    const deliveryLog = jobLog.child({ delivery: data.deliveryId });
    const nightlyRunId = await ingestDelivery(database, data.deliveryId, {
      ...options.ingest,
      ...(metrics ? { ingestSeconds: metrics.ingestSeconds } : {}),
      log: deliveryLog,
      onWarning: (message: string) => deliveryLog.warn(message),
      onQuarantined: (_deliveryId: string, reason: string) =>
        deliveryLog.error({ reason }, 'delivery quarantined; its batch is asked for again'),
    });
    if (!nightlyRunId) return;
    // Room for one more export in flight: the service is asked for the next at once.
    await sendUnsentRequests({ ...deps, log: deliveryLog.child({ run: nightlyRunId }) }, nightlyRunId, now);
    if (!(await runNeedsAdvance(database.db, nightlyRunId))) return;
    await scheduleAdvance(nightlyRunId);
    wake(QUEUES.advanceNightlyRun);
  });
  await work<{ nightlyRunId: string }>(QUEUES.advanceNightlyRun, async (data: { nightlyRunId: string }, jobLog) => {
    await advanceNightlyRun({ ...deps, log: jobLog }, data.nightlyRunId);
  });
  const sweep = () =>
    resumeUnfinishedWork(boss, database, log).catch((error: unknown) => log.error({ err: error }, 'sweep failed'));
  await sweep();
  const timer = setInterval(() => void sweep(), SWEEP_MS);
  timer.unref();
  return {
    wake,
    async stop() {
      clearInterval(timer);
      await presence.stop().catch((error: unknown) => log.error({ err: error }, 'worker presence not removed'));
    },
  };
}

/** A stored delivery younger than this is left to the job its receiver enqueued. */
const DELIVERY_GRACE_MS = 30_000;
/** Deliveries looked at per sweep; the next sweep takes the rest. */
const SWEEP_BATCH = 1000;

/**
 * What a crash may have left without a job: a delivery stored but never enqueued (the process died between the
 * commit and the send), an ingest whose retries ran out while the database was away, a run whose next advance
 * was never sent. A delivery a job still holds (waiting or running) gets no second one: the ingest queue is
 * exclusive per delivery. A quarantined delivery is failed, and never swept again.
 */
async function resumeUnfinishedWork(boss: PgBoss, database: Database, log: Logger): Promise<void> {
  const deliveries = await database.db
    .selectFrom('recon.deliveries')
    .select('delivery_id')
    .where('state', '=', 'received')
    .where('received_at', '<', new Date(Date.now() - DELIVERY_GRACE_MS))
    .orderBy('delivery_id')
    .limit(SWEEP_BATCH)
    .execute();
  const runs = await database.db
    .selectFrom('recon.nightly_runs')
    .select('nightly_run_id')
    .where('state', 'in', ['requesting', 'waiting', 'reconciling'])
    .where((eb) => eb.or([eb('next_advance_at', 'is', null), eb('next_advance_at', '<=', new Date())]))
    .execute();
  const enqueued = await sendIngestJobs(
    boss,
    deliveries.map((row) => String(row.delivery_id)),
  );
  if (runs.length > 0)
    await boss.insert(
      QUEUES.advanceNightlyRun,
      runs.map((row) => ({ data: { nightlyRunId: String(row.nightly_run_id) } })),
    );
  if (enqueued + runs.length > 0)
    log.info(
      { deliveries: enqueued, runs: runs.length },
      `resumed ${enqueued} delivery(ies) to ingest and ${runs.length} nightly run(s)`,
    );
}
