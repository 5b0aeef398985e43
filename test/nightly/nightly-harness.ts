import type { PgBoss } from 'pg-boss';
import { createPaymentClient } from '../../src/client/payment-client.ts';
import { loadConfig, type NightlyConfig } from '../../src/config/config.ts';
import type { Database } from '../../src/db/database.ts';
import { createMetricsRegistry } from '../../src/metrics/metrics-registry.ts';
import { findNightlyRun } from '../../src/nightly/nightly-run.ts';
import { triggerNightlyRun } from '../../src/nightly/nightly-scheduler.ts';
import { advanceSender, startNightlyWorker } from '../../src/nightly/nightly-worker.ts';
import { openJobQueue, QUEUES } from '../../src/queue/job-queue.ts';
import { startReceiver, type RunningReceiver } from '../../src/receive/start-receiver.ts';
import type { Sandbox } from '../../src/sandbox/sandbox.ts';

export const IDENTIFIER = 'NIGHTLY';
export const SECRET = 'nightly-secret';

/**
 * recon serve's parts, in the test's process, over real sockets: the receiver on a loopback port, the job queue
 * in the test's database, a worker, and a client of the sandbox. Only the scheduler's clock is left out: runs are
 * started as the scheduler starts them (triggerNightlyRun).
 */
export interface NightlyHarness {
  readonly boss: PgBoss;
  readonly receiver: RunningReceiver;
  readonly callbackBaseUrl: string;
  start(runDate: string, asOf?: Date): Promise<string>;
  /** Resolves with the run's final state; fails the test past `timeoutMs`. */
  settled(nightlyRunId: string, timeoutMs?: number): Promise<string>;
  close(): Promise<void>;
}

export async function startNightlyHarness(
  database: Database,
  sandbox: Sandbox,
  sandboxUrl: string,
  nightly: Partial<NightlyConfig> = {},
  /** Where the service is told to deliver; the receiver's own URL unless a test puts something in between. */
  callbackBase: (receiverUrl: string) => string = (receiverUrl) => `${receiverUrl}/`,
): Promise<NightlyHarness> {
  const config = loadConfig({});
  const boss = await openJobQueue(database, { heartbeatSeconds: 10 });
  // "/" as the callback path keeps the base short enough (23 characters) for a 9-character token.
  let callbackBaseUrl = 'http://127.0.0.1:1/';
  const receiver = await startReceiver({
    db: database.db,
    secret: SECRET,
    callbackBaseUrl,
    maxFileBytes: config.limits.maxFileBytes,
    metrics: createMetricsRegistry(),
    host: '127.0.0.1',
    port: 0,
    onDelivered: async (deliveryId) => {
      await boss.send(QUEUES.ingestDelivery, { deliveryId });
    },
  });
  callbackBaseUrl = callbackBase(receiver.url);
  const client = createPaymentClient({ baseUrl: sandboxUrl, identifier: IDENTIFIER, secret: SECRET, timeoutMs: 5_000, retry: { attempts: 2, baseDelayMs: 10 } });
  await startNightlyWorker(boss, database, {
    client,
    callbackBaseUrl,
    nightly: { ...config.nightly, ...nightly },
    reconcile: config.reconcile,
    ingest: { timezone: 'UTC', limits: config.limits },
    pollingIntervalSeconds: 0.5,
  });
  void sandbox;
  return {
    boss,
    receiver,
    callbackBaseUrl,
    async start(runDate, asOf = new Date()) {
      const { nightlyRunId } = await triggerNightlyRun(database.db, runDate, asOf, advanceSender(boss));
      return nightlyRunId;
    },
    async settled(nightlyRunId, timeoutMs = 60_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const run = await findNightlyRun(database.db, nightlyRunId);
        if (run?.state === 'reconciled' || run?.state === 'failed') return run.state;
        if (Date.now() > deadline) throw new Error(`nightly run ${nightlyRunId} still ${run?.state} after ${timeoutMs} ms`);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    },
    async close() {
      await receiver.close({ forceAfterMs: 1_000 });
      await boss.stop({ graceful: true, close: false, timeout: 10_000 });
    },
  };
}
