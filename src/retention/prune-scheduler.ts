import { dateInZone } from '@recon/protocol';
import cron from 'node-cron';
import type { Kysely } from 'kysely';
import type { RetentionConfig } from '../config/config.ts';
import type { Schema } from '../db/schema.ts';
import { describeError } from '../errors.ts';
import { cronLogger } from '../log/cron-logger.ts';
import { silentLogger, type Logger } from '../log/logger.ts';
import { prune, type PruneRunsStep } from './prune.ts';
import { claimDailyPrune, failPrune, finishPrune } from './prune-records.ts';
import { summarizePrune, type PruneReport } from './prune-report.ts';

export interface PruneSchedulerOptions {
  readonly retention: RetentionConfig;
  /** RECON_SCHEDULE_TIMEZONE: a daily prune's day is the date there. */
  readonly timezone: string;
  /** Each prune done (info) or failed (error). */
  readonly log?: Logger;
  readonly now?: () => Date;
  /** When to look whether the day's prune is due, besides at start: every hour by default. */
  readonly checkSchedule?: string;
  readonly batchSize?: number;
  readonly steps?: { readonly pruneRuns: PruneRunsStep };
}

export type DailyPrune =
  /** The day's prune is done, or under way, in this or another process. */
  | { readonly kind: 'not-due'; readonly day: string }
  | { readonly kind: 'pruned'; readonly day: string; readonly pruneId: string; readonly report: PruneReport }
  /** Claimed and failed (claimed again at the next check), or the claim itself failed. */
  | { readonly kind: 'failed'; readonly day: string; readonly pruneId: string | undefined; readonly failure: string };

export interface PruneScheduler {
  /** Looks now, after the check in progress if any. */
  checkNow(): Promise<DailyPrune>;
  /** Stops firing, cuts a prune in progress between two batches, and waits for it. */
  stop(): Promise<void>;
}

/**
 * recon serve's daily prune: at start, then every hour, it looks whether the day's prune is done and, if not, claims
 * the day (prune-records.ts) and prunes. Every serve process may look: the claim makes one of them prune each day,
 * and a failed prune is taken up again by the next check. A check never overlaps another in a process, and never
 * throws: a failure is logged and recorded.
 */
export function startPruneScheduler(db: Kysely<Schema>, options: PruneSchedulerOptions): PruneScheduler {
  const now = options.now ?? (() => new Date());
  const log = options.log ?? silentLogger;
  const stopping = new AbortController();
  let running: Promise<DailyPrune> | undefined;
  const run = () => {
    const check = dailyPrune(db, options, now, log, stopping.signal);
    running = check;
    const done = () => {
      if (running === check) running = undefined;
    };
    // dailyPrune catches its own failures; should it throw regardless, no check is left marked as running.
    void check.then(done, done);
    return check;
  };
  const task = cron.schedule(
    options.checkSchedule ?? '17 * * * *',
    () => {
      if (!running) void run();
    },
    { timezone: options.timezone, noOverlap: true, name: 'recon-prune', logger: cronLogger(log, 'recon-prune') },
  );
  void run();
  return {
    async checkNow() {
      await running;
      return run();
    },
    async stop() {
      await task.stop();
      stopping.abort(new Error('recon serve is stopping'));
      await running;
    },
  };
}

async function dailyPrune(
  db: Kysely<Schema>,
  options: PruneSchedulerOptions,
  now: () => Date,
  log: Logger,
  signal: AbortSignal,
): Promise<DailyPrune> {
  const at = now();
  const day = dateInZone(at, options.timezone);
  let pruneId: string | undefined;
  try {
    pruneId = await claimDailyPrune(db, day, at);
    if (pruneId === undefined) return { kind: 'not-due', day };
    const started = performance.now();
    const report = await prune(
      db,
      { retention: options.retention, now: at, dryRun: false, batchSize: options.batchSize, signal },
      options.steps,
    );
    await finishPrune(db, pruneId, report, now());
    log.info(
      {
        prune: pruneId,
        day,
        deliveries: report.deliveries.deliveries,
        bytes: report.deliveries.bytes,
        failedDeliveries: report.failedDeliveries.deliveries,
        failedBytes: report.failedDeliveries.bytes,
        runs: report.runs.runs,
        seconds: Math.round(performance.now() - started) / 1000,
      },
      summarizePrune(report),
    );
    return { kind: 'pruned', day, pruneId, report };
  } catch (error) {
    const failure = describeError(signal.aborted ? signal.reason : error);
    if (pruneId !== undefined) await failPrune(db, pruneId, failure).catch(() => undefined);
    // Stopped by a drain: what committed stays pruned, and the next check, here or elsewhere, carries on.
    if (signal.aborted) log.warn({ prune: pruneId, day }, `prune stopped: ${failure}`);
    else log.error({ prune: pruneId, day, err: error }, `prune failed: ${failure}`);
    return { kind: 'failed', day, pruneId, failure };
  }
}
