/**
 * What recon's stages log through: pino's logger satisfies it, and so does `silentLogger`, the default of code that
 * takes one. Stages are handed a logger (a child carrying their ids: run, batch, delivery, request) by the command
 * that runs them; none creates its own, so pure code stays free of I/O and tests stay quiet.
 */
export interface Logger {
  trace: LogFn;
  debug: LogFn;
  info: LogFn;
  warn: LogFn;
  error: LogFn;
  fatal: LogFn;
  /** A logger whose every record carries `bindings` too. */
  child(bindings: LogFields): Logger;
}

/** Fields of a record: ids, counts, durations. Never a form, a secret or an e-mail (redaction.ts catches known ones). */
export type LogFields = Record<string, unknown>;

export interface LogFn {
  (fields: LogFields, message: string): void;
  (message: string): void;
}

export const LOG_LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

const ignore = () => {};

/** Logs nothing: the default wherever a logger is optional. */
export const silentLogger: Logger = {
  trace: ignore,
  debug: ignore,
  info: ignore,
  warn: ignore,
  error: ignore,
  fatal: ignore,
  child: () => silentLogger,
};
