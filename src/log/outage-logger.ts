import { trackDatabaseOutage, type DatabaseOutage } from '../db/database-outage.ts';
import type { LogFields, Logger, LogFn } from './logger.ts';

export interface OutageLoggerOptions {
  /** A query that succeeds once the database is back (SELECT 1). */
  readonly probe: () => Promise<unknown>;
  /** How often the database is probed while it is away: 1 s. */
  readonly probeEveryMs?: number;
  /** How often an outage that lasts is counted in a line: every 30 s. */
  readonly summaryEveryMs?: number;
}

export interface OutageLogger {
  /** `log`, but a record whose `err` says the database is unavailable is counted in the outage, not written. */
  readonly log: Logger;
  readonly outage: DatabaseOutage;
  /** Stops probing: before the database is closed. */
  stop(): void;
}

/**
 * A database outage as `recon serve` and `recon worker` log it: one warning when it starts (its first error as
 * `err: {code, message}`, whatever library reported it), a count every 30 s while it lasts, and one line when the
 * probe finds the database back, however many parts of the process met it away in between. Every other record
 * passes as it is.
 */
export function withOutageLog(log: Logger, options: OutageLoggerOptions): OutageLogger {
  let probing: NodeJS.Timeout | undefined;
  let stopped = false;
  const probeEveryMs = options.probeEveryMs ?? 1_000;
  const outage = trackDatabaseOutage(
    {
      started(error, source) {
        log.warn({ err: error, source }, 'database unreachable: trying again until it is back');
        probeLater();
      },
      lasting(seconds, errors) {
        log.warn({ seconds, errors }, `database still unreachable after ${seconds} s: ${errors} error(s) so far`);
      },
      ended(seconds, errors) {
        log.info({ seconds, errors }, `database is back after ${seconds} s (${errors} error(s) while it was away)`);
      },
    },
    options.summaryEveryMs === undefined ? {} : { summaryEveryMs: options.summaryEveryMs },
  );
  function probeLater(): void {
    if (stopped || probing) return;
    probing = setTimeout(() => {
      const errorsBefore = outage.errors;
      options.probe().then(
        () => {
          probing = undefined;
          // An error met while the probe went through was still the outage's: the next probe says it is over.
          if (outage.errors === errorsBefore) return outage.answered();
          outage.stillAway();
          probeLater();
        },
        () => {
          probing = undefined;
          outage.stillAway();
          if (outage.ongoing) probeLater();
        },
      );
    }, probeEveryMs);
    probing.unref();
  }
  const wrap = (inner: Logger): Logger => {
    const counted =
      (write: LogFn): LogFn =>
      (first: LogFields | string, message?: string) => {
        if (typeof first === 'object' && first.err !== undefined && outage.failed(first.err, message ?? '')) return;
        if (typeof first === 'string') write(first);
        else write(first, message ?? '');
      };
    return {
      trace: inner.trace.bind(inner),
      debug: inner.debug.bind(inner),
      info: counted(inner.info.bind(inner)),
      warn: counted(inner.warn.bind(inner)),
      error: counted(inner.error.bind(inner)),
      fatal: counted(inner.fatal.bind(inner)),
      child: (bindings) => wrap(inner.child(bindings)),
    };
  };
  return {
    log: wrap(log),
    outage,
    stop() {
      stopped = true;
      clearTimeout(probing);
    },
  };
}
