import type { PgBoss } from 'pg-boss';
import { createPaymentClient } from '../../src/client/payment-client.ts';
import { loadConfig, type NightlyConfig } from '../../src/config/config.ts';
import type { Database } from '../../src/db/database.ts';
import { createMetricsRegistry } from '../../src/metrics/metrics-registry.ts';
import { findNightlyRun } from '../../src/nightly/nightly-run.ts';
import { triggerNightlyRun } from '../../src/nightly/nightly-scheduler.ts';
import { advanceSender } from '../../pipelines/nightly/nightly-worker.ts';
import { startReconServices } from '../../pipelines/nightly/recon-services.ts';
import type { RunningReceiver } from '../../src/receive/start-receiver.ts';

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
  start(runDate: string, asOf?: Date): Promise<string>;
  /** Resolves with the run's final state; fails the test past `timeoutMs`. */
  settled(nightlyRunId: string, timeoutMs?: number): Promise<string>;
  close(): Promise<void>;
}

/** An account recon is configured with: its IDENTIFIER, secret and group. */
export interface HarnessAccount {
  readonly identifier: string;
  readonly secret: string;
  readonly group?: string | undefined;
}

export async function startNightlyHarness(
  database: Database,
  sandboxUrl: string,
  nightly: Partial<NightlyConfig> = {},
  /** Where the service is told to deliver (path `/`); the receiver itself unless a test puts something between. */
  callbackBaseUrl?: string,
  /** The merchant's accounts, as recon is configured with them; one account (IDENTIFIER, SECRET) by default. */
  accounts: readonly HarnessAccount[] = [{ identifier: IDENTIFIER, secret: SECRET }],
): Promise<NightlyHarness> {
  const config = loadConfig({});
  const services = await startReconServices({
    database,
    heartbeatSeconds: 10,
    ...(callbackBaseUrl ? { callbackBaseUrl } : {}),
    receiver: {
      host: '127.0.0.1',
      port: 0,
      accounts: accounts.map(({ identifier, secret }) => ({ identifier, secret })),
      maxFileBytes: config.limits.maxFileBytes,
      metrics: createMetricsRegistry(),
    },
    worker: {
      accounts: accounts.map(({ identifier, secret, group }) => ({
        identifier,
        group,
        client: createPaymentClient({
          baseUrl: sandboxUrl,
          identifier,
          secret,
          timeoutMs: 5_000,
          retry: { attempts: 2, baseDelayMs: 10 },
        }),
      })),
      nightly: { ...config.nightly, ...nightly },
      reconcile: config.reconcile,
      ingest: { timezone: 'UTC', limits: config.limits },
      pollingIntervalSeconds: 0.5,
    },
  });
  return {
    boss: services.boss,
    receiver: services.receiver!,
    async start(runDate, asOf = new Date()) {
      const { nightlyRunId } = await triggerNightlyRun(database.db, runDate, asOf, advanceSender(services.boss));
      return nightlyRunId;
    },
    async settled(nightlyRunId, timeoutMs = 60_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const run = await findNightlyRun(database.db, nightlyRunId);
        if (run?.state === 'reconciled' || run?.state === 'failed') return run.state;
        if (Date.now() > deadline)
          throw new Error(`nightly run ${nightlyRunId} still ${run?.state} after ${timeoutMs} ms`);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    },
    close: () => services.close({ graceful: true }),
  };
}
