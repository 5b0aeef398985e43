import { setTimeout as sleep } from 'node:timers/promises';
import type { Kysely } from 'kysely';
import type { Schema } from '../db/schema.ts';
import { checkAlerts, type AlertCheck, type AlertCheckOptions } from './alert-check.ts';

/**
 * How long a drain waits for alerts being sent before it cuts them: an alert usually goes in well under a second,
 * and one not sent by then is handed back to recon.alerts for the next process (deliver-alerts.ts).
 */
export const ALERT_DRAIN_MS = 5_000;

export interface AlertMonitor {
  /** Runs a check now, after the one in progress if any. */
  checkNow(): Promise<AlertCheck>;
  /**
   * Stops the timer and waits for a check in progress, at most `drainMs` (ALERT_DRAIN_MS) for its sends, which are
   * then cut and handed back; so that the database may be closed after.
   */
  stop(): Promise<void>;
}

/**
 * The alert check (alert-check.ts) at start and every `everyMs` (a minute) after, until stopped. A check never
 * overlaps another: a tick that finds one still running (a slow relay) is skipped. A failed check is logged, never
 * thrown: the next tick tries again. The timer does not keep the process alive.
 */
export function startAlertMonitor(
  db: Kysely<Schema>,
  options: AlertCheckOptions & { readonly everyMs?: number; readonly drainMs?: number },
): AlertMonitor {
  const stopping = new AbortController();
  let running: Promise<AlertCheck> | undefined;
  const run = () => {
    const check = checkAlerts(db, { ...options, stop: stopping.signal });
    running = check;
    void check.then(
      () => {
        if (running === check) running = undefined;
      },
      (error: unknown) => {
        if (running === check) running = undefined;
        // As `err`, so that a database outage is told as one (outage-logger.ts); the service's logger scrubs the
        // alerts' secrets from every line (service-logger.ts).
        options.log?.error({ err: error }, 'alert check failed');
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
      const check = running?.catch(() => {});
      if (check) {
        const grace = new AbortController();
        await Promise.race([
          check,
          sleep(options.drainMs ?? ALERT_DRAIN_MS, undefined, { signal: grace.signal }),
        ]).catch(() => {});
        grace.abort();
      }
      stopping.abort();
      await check;
    },
  };
}
