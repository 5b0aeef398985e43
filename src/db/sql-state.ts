/** The SQLSTATEs recon branches on, by name (PostgreSQL's Appendix A). */
export const SQL_STATE = {
  uniqueViolation: '23505',
  invalidParameterValue: '22023',
  insufficientPrivilege: '42501',
  duplicateObject: '42710',
  dependentObjectsStillExist: '2BP01',
  // reporting.exception_action's own (migration 0023): class RC is no standard class.
  exceptionNoVerdict: 'RC001',
  exceptionNotOpen: 'RC002',
  exceptionNotAcknowledged: 'RC003',
  exceptionNoteRequired: 'RC004',
  exceptionTextTooLong: 'RC005',
  exceptionAlreadyAcknowledged: 'RC006',
} as const;

/** The SQLSTATE a database error carries, if it is one. */
export function sqlState(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null | undefined)?.code;
  return typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code) ? code : undefined;
}

export function isUniqueViolation(error: unknown): boolean {
  return sqlState(error) === SQL_STATE.uniqueViolation;
}

/** What the network says when the server went away or cannot be reached. */
const CONNECTION_ERROR_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'EHOSTDOWN',
  'ENETUNREACH',
  'ENETDOWN',
  'ENOTFOUND',
  'EAI_AGAIN',
]);
/**
 * The SQLSTATEs of a server that will not take or keep a connection now: class 08 (connection exception), a
 * shutdown (57P01 admin, 57P02 crash), a server starting up or in recovery (57P03), an idle session ended
 * (57P05), too many connections (53300).
 */
const UNAVAILABLE_STATES = /^(08...|57P0[1235]|53300)$/;
/** 55000 is a wide class (object not in prerequisite state): only its "not accepting connections" is an outage. */
const NOT_ACCEPTING = /not (currently )?accepting connections/i;
/** node-postgres's own words for a connection lost or never made (its errors then carry no code). */
const CONNECTION_LOST =
  /^(Connection terminated|Client has encountered a connection error|timeout exceeded when trying to connect|Connection ended)/;

/**
 * The database cannot be reached or will not take connections now, whatever reported it: node-postgres, pg-pool,
 * PGlite, or pg-boss (which emits a plain copy of the error's fields). Looks through causes and aggregates. An
 * outage to wait out, not the work's fault.
 */
export function isDatabaseUnavailable(error: unknown): boolean {
  return someCause(error, (current) => {
    const state = sqlState(current);
    if (state !== undefined)
      return UNAVAILABLE_STATES.test(state) || (state === '55000' && NOT_ACCEPTING.test(messageOf(current)));
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string' && CONNECTION_ERROR_CODES.has(code)) return true;
    return CONNECTION_LOST.test(messageOf(current));
  });
}

/**
 * The database failed, not the work: unavailable (isDatabaseUnavailable), or a deadlock, a serialization failure,
 * a server short of resources (SQLSTATE classes 40, 53, 57P). The same work later may well succeed.
 */
export function isTransientDatabaseError(error: unknown): boolean {
  return isDatabaseUnavailable(error) || someCause(error, (current) => /^(40|53|57P)/.test(sqlState(current) ?? ''));
}

/** Whether `test` holds for the error, one of its causes (5 deep) or of an aggregate's errors. */
function someCause(error: unknown, test: (current: object) => boolean): boolean {
  for (let current = error, depth = 0; isObject(current) && depth < 5; current = current.cause, depth++) {
    if (test(current)) return true;
    if (current instanceof AggregateError && current.errors.some((inner) => someCause(inner, test))) return true;
  }
  return false;
}

function isObject(value: unknown): value is { cause?: unknown } {
  return typeof value === 'object' && value !== null;
}

function messageOf(value: object): string {
  const message = (value as { message?: unknown }).message;
  return typeof message === 'string' ? message : '';
}
