import { dateInZone } from '@recon/protocol';
import cron from 'node-cron';
import type { Kysely } from 'kysely';
import type { Schema } from '../db/schema.ts';
import { ReconError } from '../errors.ts';
import { cronLogger } from '../log/cron-logger.ts';
import { silentLogger, type Logger } from '../log/logger.ts';
import { startNightlyRun } from './nightly-run.ts';
import { slotSkippedByClockChange } from './schedule-gap.ts';

export interface NightlySchedulerOptions {
  readonly schedule: string;
  readonly timezone: string;
  /** Sets a newly created run going (enqueues its first advance). */
  readonly onRunCreated: (nightlyRunId: string) => Promise<void>;
  readonly onError: (error: unknown) => void;
  /** Told of each run this scheduler starts. */
  readonly log?: Logger;
  readonly now?: () => Date;
  /** How often to look for a slot the clock change skipped (schedule-gap.ts); every 15 minutes by default. */
  readonly gapCheckSchedule?: string;
}

/**
 * The nightly schedule: node-cron fires in the schedule's zone, and each firing asks for the run of that date.
 * Every process may schedule: the run's date is unique in the database, so one slot gives one run however many
 * schedulers fire for it, and a slot whose run exists (a restart, a second process) attaches to it. No overlap
 * within a process: a tick still starting its run makes the next wait. A slot the spring-forward gap skipped is
 * started in the hour after the gap (schedule-gap.ts).
 */
export function startNightlyScheduler(
  db: Kysely<Schema>,
  options: NightlySchedulerOptions,
): { stop: () => Promise<void> } {
  if (!cron.validate(options.schedule))
    throw new ReconError('CONFIG', `RECON_SCHEDULE: '${options.schedule}' is not a cron expression`);
  const now = options.now ?? (() => new Date());
  const log = options.log ?? silentLogger;
  const inFlight = new Set<Promise<void>>();
  const start = (slotDate: () => string | undefined) => {
    const tick = (async () => {
      try {
        const runDate = slotDate();
        if (runDate === undefined) return;
        // Logged before its first advance is enqueued, so that it comes before whatever the workers log of the run.
        await triggerNightlyRun(db, runDate, now(), async (nightlyRunId) => {
          log.info({ run: nightlyRunId, date: runDate, state: 'requesting' }, 'nightly run started');
          await options.onRunCreated(nightlyRunId);
        });
      } catch (error) {
        options.onError(error);
      }
    })();
    inFlight.add(tick);
    // tick never rejects: its errors go to onError above.
    void tick.finally(() => inFlight.delete(tick));
    return tick;
  };
  const tasks = [
    // A run's key is the calendar date of its slot in the schedule's zone.
    cron.schedule(options.schedule, () => start(() => dateInZone(now(), options.timezone)), {
      timezone: options.timezone,
      noOverlap: true,
      name: 'recon-nightly',
      logger: cronLogger(log, 'recon-nightly'),
    }),
    cron.schedule(
      options.gapCheckSchedule ?? '*/15 * * * *',
      () => start(() => slotSkippedByClockChange(options.schedule, options.timezone, now())),
      {
        timezone: options.timezone,
        noOverlap: true,
        name: 'recon-nightly-gap',
        logger: cronLogger(log, 'recon-nightly-gap'),
      },
    ),
  ];
  return {
    /** Stops firing, then waits for a tick in progress, so that the database may be closed after. */
    async stop() {
      for (const task of tasks) await task.stop();
      await Promise.all(inFlight);
    },
  };
}

/**
 * The run of `runDate`, started if new (its first advance enqueued by the process that created it). Returns its id
 * and whether this call created it. Should that process die before enqueuing, the workers' sweep sets it going.
 */
export async function triggerNightlyRun(
  db: Kysely<Schema>,
  runDate: string,
  asOf: Date,
  onRunCreated: (nightlyRunId: string) => Promise<void>,
): Promise<{ nightlyRunId: string; created: boolean }> {
  const { run, created } = await startNightlyRun(db, runDate, asOf);
  if (created) await onRunCreated(run.nightlyRunId);
  return { nightlyRunId: run.nightlyRunId, created };
}
