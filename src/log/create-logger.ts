import { pino, stdTimeFunctions } from 'pino';
import { describeError, ReconError } from '../errors.ts';
import type { Logger, LogLevel } from './logger.ts';
import { censor, logLineScrubber, REDACTED_PATHS } from './redaction.ts';
import { terminalDestination } from './terminal-line.ts';

export interface CreateLoggerOptions {
  /** RECON_LOG_LEVEL. */
  readonly level: LogLevel;
  /** Where the lines go (stdout): JSON lines, or readable one-liners when it is a terminal. */
  readonly stream: { write(text: string): unknown; isTTY?: boolean };
  /** The process's name in every record: `recon serve`, `recon worker`. */
  readonly name: string;
  /** Values never to be written whatever field or message carries them: the account's secret, the database's password. */
  readonly secrets?: readonly (string | undefined)[];
}

/**
 * The logger of a long-running command: one JSON object a line (level, time, msg, the process's name and pid, then
 * the record's fields), for a log collector and jq; one readable line a record on a terminal. Errors are logged as
 * `err: { code, message }` on one line, never a stack trace. See redaction.ts for what never appears.
 */
export function createLogger(options: CreateLoggerOptions): Logger {
  const scrub = logLineScrubber(options.secrets ?? []);
  return pino(
    {
      name: options.name,
      level: options.level,
      timestamp: stdTimeFunctions.isoTime,
      // Labels rather than pino's numbers: `select(.level == "error")` reads as what it means.
      formatters: { level: (label) => ({ level: label }) },
      serializers: { err: errorFields },
      redact: { paths: [...REDACTED_PATHS], censor },
      hooks: { streamWrite: scrub },
    },
    options.stream.isTTY ? terminalDestination(options.stream) : options.stream,
  );
}

/** An error as a record shows it: its stable code (a ReconError's, or Node's like ECONNREFUSED) and one line. */
export function errorFields(error: unknown): { code: string; message: string } {
  const code =
    error instanceof ReconError
      ? error.code
      : typeof (error as { code?: unknown } | undefined)?.code === 'string'
        ? (error as { code: string }).code
        : error instanceof Error
          ? error.name
          : 'ERROR';
  return { code, message: describeError(error) };
}
