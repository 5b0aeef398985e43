/**
 * recon's one error class. `code` is stable: callers branch on it and the CLI maps it to an exit code.
 * The message is one line that names the file, line or field at fault; `cause` keeps the original error.
 */
export class ReconError extends Error {
  readonly code: ReconErrorCode;

  constructor(code: ReconErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'ReconError';
    this.code = code;
  }
}

export type ReconErrorCode =
  // usage and configuration (exit 1)
  | 'USAGE'
  | 'CONFIG'
  // a file that cannot be ingested as a whole
  | 'FILE_UNREADABLE'
  | 'FILE_EMPTY'
  | 'ARCHIVE_CORRUPT'
  | 'ARCHIVE_ENCRYPTED'
  | 'ARCHIVE_EMPTY'
  | 'LIMIT_EXCEEDED'
  | 'CSV_MALFORMED'
  | 'CSV_HEADER'
  // the merchant's orders: a source that cannot be read at all (exit 2)
  | 'ORDERS_SOURCE'
  // recon report: the run asked for (or any finished run) does not exist (exit 2)
  | 'RUN_NOT_FOUND'
  // recon exceptions: no verdict for the ORDERID, not an open exception (ack), not acknowledged (reopen), already
  // acknowledged (ack) (exit 2)
  | 'EXCEPTION_NOT_FOUND'
  | 'EXCEPTION_NOT_OPEN'
  | 'EXCEPTION_NOT_ACKNOWLEDGED'
  | 'EXCEPTION_ALREADY_ACKNOWLEDGED'
  // recon report --out: the report file cannot be written (exit 2, nothing left behind)
  | 'OUTPUT_UNWRITABLE'
  // stopped by SIGINT/SIGTERM (exit 2: the work was cut short, whatever was in flight rolled back)
  | 'INTERRUPTED'
  // recon serve: a stored delivery that is not there, or whose bytes no longer match its sha256
  | 'DELIVERY_NOT_FOUND'
  | 'DELIVERY_CORRUPT'
  // a stored delivery whose bytes retention deleted (RECON_DELIVERY_RETENTION_DAYS, or
  // RECON_FAILED_DELIVERY_RETENTION_DAYS for a failed one): its rows stay, its bytes do not
  | 'DELIVERY_PRUNED'
  // database
  | 'DATABASE'
  | 'MIGRATION'
  // an alert's webhook or SMTP relay refused it or did not answer (recorded on the alert, tried again)
  | 'ALERT_DELIVERY'
  // payment service protocol
  | 'PROTOCOL_RESPONSE'
  | 'SERVICE_ERROR'
  | 'NETWORK'
  | 'TIMEOUT';

export function isReconError(error: unknown, code?: ReconErrorCode): error is ReconError {
  return error instanceof ReconError && (code === undefined || error.code === code);
}

/** One line for humans: the message, then the causes' messages, without stack traces. */
export function describeError(error: unknown): string {
  if (error instanceof ReconError) return error.message;
  if (error instanceof Error) {
    const cause = error.cause instanceof Error ? `: ${error.cause.message}` : '';
    return `${error.message}${cause}`.replace(/\s*\n\s*/g, ' ');
  }
  return String(error);
}
