import { describeError, ReconError } from '../errors.ts';

/**
 * How a file that did not load is described in its summary and in recon.files: a ReconError speaks for
 * itself; anything else (a database error, mostly) gets the file and entry at fault from an EntryError
 * and a code, DATABASE when it carries a SQLSTATE, UNEXPECTED otherwise.
 */
export interface IngestFailure {
  readonly code: string;
  readonly message: string;
}

const UNIQUE_VIOLATION = '23505';
const LOADED_SHA256_INDEX = 'files_loaded_sha256_key';

/** A failure that is not already a ReconError (a database error, mostly), tagged with the file and entry at fault. */
export class EntryError extends Error {
  readonly label: string;
  constructor(label: string, cause: unknown) {
    super(describeError(cause), { cause });
    this.name = 'EntryError';
    this.label = label;
  }
}

export function describeFailure(error: unknown, fileName: string): IngestFailure {
  if (error instanceof ReconError) return { code: error.code, message: error.message };
  if (error instanceof EntryError)
    return { code: databaseCode(sqlState(error.cause)), message: `${error.label}: ${error.message}` };
  return { code: databaseCode(sqlState(error)), message: `${fileName}: ${describeError(error)}` };
}

/**
 * DATABASE_TRANSIENT: the file was fine, the database was not this time (a deadlock, a serialization failure, a
 * lost connection, a server shutting down or short of resources): the same load later may well succeed.
 */
function databaseCode(state: string | undefined): string {
  if (state === undefined) return 'UNEXPECTED';
  return /^(40|08|53|57P)/.test(state) ? 'DATABASE_TRANSIENT' : 'DATABASE';
}

function sqlState(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code) ? code : undefined;
}

/** Another process loaded the same bytes while this one did: its claim on the sha256 won. */
export function isConcurrentLoadOfSameBytes(error: unknown): boolean {
  const constraint = (error as { constraint?: unknown }).constraint;
  return sqlState(error) === UNIQUE_VIOLATION && (constraint === undefined || constraint === LOADED_SHA256_INDEX);
}
