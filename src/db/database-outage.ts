import { isDatabaseUnavailable } from './sql-state.ts';

/** What an outage is told as: its first error, how it goes while it lasts, and its end. */
export interface OutageReport {
  /** The first error that found the database unavailable, and what reported it (a log record's message). */
  started(error: unknown, source: string): void;
  /** While it lasts, at most every `summaryEveryMs`: how long so far and how many errors were counted. */
  lasting(seconds: number, errors: number): void;
  /** The database answered again. */
  ended(seconds: number, errors: number): void;
}

export interface DatabaseOutage {
  /**
   * An error someone met: counted, and true, when it says the database is unavailable (isDatabaseUnavailable),
   * which starts an outage if none is on; false for any other error, which is not the outage's to tell.
   */
  failed(error: unknown, source: string): boolean;
  /** The database is still away (a probe failed): says how it goes, if that is due. */
  stillAway(): void;
  /** The database answered: ends the outage, if one is on. */
  answered(): void;
  readonly ongoing: boolean;
  /** Errors counted in the outage on now (0 when none is). */
  readonly errors: number;
}

/**
 * An outage told in three parts rather than one line per error: one when it starts, a count every
 * `summaryEveryMs` (30 s) while it lasts, one when it ends. Every part of a process that meets the database away
 * (the queue's polling, the worker's heartbeat, a job, a check) reports into the same outage.
 */
export function trackDatabaseOutage(
  report: OutageReport,
  options: { readonly summaryEveryMs?: number; readonly now?: () => number } = {},
): DatabaseOutage {
  const now = options.now ?? Date.now;
  const summaryEveryMs = options.summaryEveryMs ?? 30_000;
  let outage: { since: number; errors: number; saidAt: number } | undefined;
  const seconds = (since: number) => Math.round((now() - since) / 1000);
  const sayIfDue = () => {
    if (!outage || now() - outage.saidAt < summaryEveryMs) return;
    outage.saidAt = now();
    report.lasting(seconds(outage.since), outage.errors);
  };
  return {
    failed(error, source) {
      if (!isDatabaseUnavailable(error)) return false;
      if (outage) {
        outage.errors++;
        sayIfDue();
        return true;
      }
      outage = { since: now(), errors: 1, saidAt: now() };
      report.started(error, source);
      return true;
    },
    stillAway: sayIfDue,
    answered() {
      if (!outage) return;
      const { since, errors } = outage;
      outage = undefined;
      report.ended(seconds(since), errors);
    },
    get ongoing() {
      return outage !== undefined;
    },
    get errors() {
      return outage?.errors ?? 0;
    },
  };
}
