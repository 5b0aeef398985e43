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
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
]);
/** node-postgres's own words for a connection lost or never made (its errors then carry no code). */
const CONNECTION_LOST =
  /^(Connection terminated|Client has encountered a connection error|timeout exceeded when trying to connect|Connection ended)/;

/**
 * The database failed, not the work: a connection lost or refused, a server shutting down or short of resources, a
 * deadlock or serialization failure (SQLSTATE classes 08, 40, 53, 57P). The same work later may well succeed.
 */
export function isTransientDatabaseError(error: unknown): boolean {
  for (let current = error, depth = 0; current instanceof Error && depth < 5; current = current.cause, depth++) {
    const state = sqlState(current);
    if (state !== undefined) return /^(08|40|53|57P)/.test(state);
    const code = (current as NodeJS.ErrnoException).code;
    if (code !== undefined && CONNECTION_ERROR_CODES.has(code)) return true;
    if (CONNECTION_LOST.test(current.message)) return true;
    if (current instanceof AggregateError && current.errors.some(isTransientDatabaseError)) return true;
  }
  return false;
}
