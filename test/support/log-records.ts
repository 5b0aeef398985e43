import { waitUntil } from './wait-until.ts';

/** One JSON line of `recon serve` or `recon worker`. */
export interface LogRecord {
  readonly level: string;
  readonly time: string;
  readonly msg: string;
  readonly [field: string]: unknown;
}

/** Every line of `stdout` as a record; a line that is not a JSON object fails, naming it. */
export function parseLogRecords(stdout: string): LogRecord[] {
  return stdout
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => {
      let record: unknown;
      try {
        record = JSON.parse(line);
      } catch {
        throw new Error(`not a JSON log line: ${line}`);
      }
      if (record === null || typeof record !== 'object' || Array.isArray(record))
        throw new Error(`not a JSON object: ${line}`);
      return record as LogRecord;
    });
}

/** The first record `matches`, once the process has written it. */
export function untilLogged(
  process: { stdoutSoFar(): string },
  what: string,
  matches: (record: LogRecord) => boolean,
  options: { timeoutMs?: number } = {},
): Promise<LogRecord> {
  return waitUntil(what, () => parseLogRecords(process.stdoutSoFar()).find(matches), options);
}

/** The messages of `records` that are among `wanted`, in the order they were logged. */
export function messagesAmong(records: readonly LogRecord[], wanted: readonly string[]): string[] {
  return records.map((record) => record.msg).filter((message) => wanted.includes(message));
}
