import type { OperationType } from '@recon/protocol';
import { TransportError } from './transport-error.ts';

/** One HTTP exchange with the payment service (a retried request is several), as the client reports it. */
export interface ServiceAttempt {
  readonly operation: OperationType;
  /**
   * The EXECCODE's class, `0xxx` (success) to `6xxx`, when the service answered one; otherwise why not:
   * `timeout`, `network` (no usable HTTP answer), `bad_answer` (an answer that is not the protocol's).
   */
  readonly outcome: string;
  /** The EXECCODE answered, when there was one. */
  readonly execCode?: string;
  /** From sending the request to the answer's last byte, or to the failure. */
  readonly seconds: number;
}

export function execCodeClass(execCode: string): string {
  return /^[0-9]{4}$/.test(execCode) ? `${execCode[0]}xxx` : 'bad_answer';
}

/** The outcome of an attempt that got no valid answer. */
export function failedAttemptOutcome(error: unknown): string {
  if (error instanceof TransportError) return error.code === 'TIMEOUT' ? 'timeout' : 'network';
  return 'bad_answer';
}
