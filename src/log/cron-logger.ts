import type { Logger as CronLogger } from 'node-cron';
import type { Logger } from './logger.ts';

/**
 * What node-cron has to say, as records of recon's log. Left to itself it writes colored lines to stderr: a tick
 * missed while the process was busy (a second-by-second schedule on a loaded machine), or one held back by
 * `noOverlap`, put a line beside the JSON records that no collector parses, and `recon serve` said nothing on stderr
 * otherwise.
 */
export function cronLogger(log: Logger, task: string): CronLogger {
  const record = (err: Error | undefined) => ({ task, ...(err ? { err } : {}) });
  const messageOf = (message: string | Error) => (message instanceof Error ? message.message : message);
  const errorOf = (message: string | Error, err?: Error) => err ?? (message instanceof Error ? message : undefined);
  return {
    info: (message) => log.info(record(undefined), `schedule: ${message}`),
    warn: (message) => log.warn(record(undefined), `schedule: ${message}`),
    error: (message, err) => log.error(record(errorOf(message, err)), `schedule: ${messageOf(message)}`),
    debug: (message, err) => log.debug(record(errorOf(message, err)), `schedule: ${messageOf(message)}`),
  };
}
