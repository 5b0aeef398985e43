/**
 * A request or notification that breaks the protocol. `execCode` is the code the service answers for it
 * (1001 missing, 1002 invalid, 1003 HASH, 1004 VERSION), so the sandbox can answer it as is and the client
 * can name the field before anything is sent. `code` is stable, for callers that branch on it.
 */
export class ProtocolError extends Error {
  readonly code: 'PROTOCOL_HASH' | 'PROTOCOL_INVALID_FIELD';
  readonly execCode: string;
  readonly field?: string;

  constructor(execCode: string, message: string, options?: { field?: string; cause?: unknown }) {
    super(message, { cause: options?.cause });
    this.code = execCode === '1003' ? 'PROTOCOL_HASH' : 'PROTOCOL_INVALID_FIELD';
    this.name = 'ProtocolError';
    this.execCode = execCode;
    if (options?.field !== undefined) this.field = options.field;
  }
}

export function missingParameter(field: string): ProtocolError {
  return new ProtocolError('1001', `missing parameter ${field}`, { field });
}

export function invalidParameter(field: string, why: string): ProtocolError {
  return new ProtocolError('1002', `invalid parameter ${field}: ${why}`, { field });
}
