import type { Kysely } from 'kysely';
import type { Schema } from '../db/schema.ts';
import { describeError } from '../errors.ts';
import { checkAlerts, type AlertCheck, type AlertCheckOptions } from './alert-check.ts';
import { scrubSecrets } from './redact.ts';

export interface AlertMonitor {
  /** Runs a check now, after the one in progress if any. */
  checkNow(): Promise<AlertCheck>;
  /** Stops the timer and waits for a check in progress, so that the database may be closed after. */
  stop(): Promise<void>;
}

/**
 * The alert check (alert-check.ts) at start and every `everyMs` (a minute) after, until stopped. A check never
 * overlaps another: a tick that finds one still running (a slow relay) is skipped. A failed check is logged, never
 * thrown: the next tick tries again. The timer does not keep the process alive.
 */
export function startAlertMonitor(
  db: Kysely<Schema>,
  options: AlertCheckOptions & { readonly everyMs?: number },
): AlertMonitor {
  let running: Promise<AlertCheck> | undefined;
  const run = () => {
    const check = checkAlerts(db, options);
    running = check;
    void check.then(
      () => {
        if (running === check) running = undefined;
      },
      (error: unknown) => {
        if (running === check) running = undefined;
        options.log?.error(`alert check failed: ${scrubSecrets(describeError(error), options.secrets)}`);
      },
    );
    return check;
  };
  const tick = () => {
    if (!running) void run().catch(() => {});
  };
  const timer = setInterval(tick, options.everyMs ?? 60_000);
  timer.unref();
  tick();
  return {
    async checkNow() {
      await running?.catch(() => {});
      return run();
    },
    async stop() {
      clearInterval(timer);
      await running?.catch(() => {});
    },
  };
}
