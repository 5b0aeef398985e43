import cron from 'node-cron';
import type { Kysely } from 'kysely';
import type { Schema } from '../db/schema.ts';
import { ReconError } from '../errors.ts';
import { startNightlyRun } from './nightly-run.ts';

export interface NightlySchedulerOptions {
  readonly schedule: string;
  readonly timezone: string;
  /** Sets a newly created run going (enqueues its first advance). */
  readonly onRunCreated: (nightlyRunId: string) => Promise<void>;
  readonly onError: (message: string) => void;
  readonly now?: () => Date;
}

/** The calendar date of `instant` in `timezone`, as YYYY-MM-DD: the key of a nightly run. */
export function dateInZone(instant: Date, timezone: string): string {
  return new Intl.DateTimeFormat('en-CA', { timeZone: timezone, year: 'numeric', month: '2-digit', day: '2-digit' }).format(instant);
}

/**
 * The nightly schedule: node-cron fires in the schedule's zone, and each firing asks for the run of that date.
 * Every process may schedule: the run's date is unique in the database, so one slot gives one run however many
 * schedulers fire for it, and a slot whose run exists (a restart, a second process) attaches to it. No overlap
 * within a process: a tick still starting its run makes the next wait.
 */
export function startNightlyScheduler(db: Kysely<Schema>, options: NightlySchedulerOptions): { stop: () => Promise<void> } {
  if (!cron.validate(options.schedule)) throw new ReconError('CONFIG', `RECON_SCHEDULE: '${options.schedule}' is not a cron expression`);
  const now = options.now ?? (() => new Date());
  const task = cron.schedule(
    options.schedule,
    async () => {
      try {
        await triggerNightlyRun(db, dateInZone(now(), options.timezone), now(), options.onRunCreated);
      } catch (error) {
        options.onError(`scheduler: ${(error as Error).message}`);
      }
    },
    { timezone: options.timezone, noOverlap: true, name: 'recon-nightly' },
  );
  return {
    async stop() {
      await task.stop();
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
