/** Why the receiver turned a request down; also the `reason` label of its metrics. */
export type RefusalReason =
  | 'unknown_token'
  | 'token_expired'
  | 'token_used'
  | 'too_large'
  | 'empty'
  | 'bad_upload'
  | 'unsupported_type'
  | 'malformed';

/**
 * A request the receiver answers with a 4xx: the status, and a one-line message for the sender (never a stack
 * trace). Thrown from deep in a delivery's transaction so that it rolls back, and answered by the handler.
 */
export class Refusal extends Error {
  readonly status: number;
  readonly reason: RefusalReason;

  constructor(status: number, reason: RefusalReason, message: string) {
    super(message);
    this.name = 'Refusal';
    this.status = status;
    this.reason = reason;
  }
}

/** The sender went away before the end of its body: nothing to answer, nothing stored. */
export class ClientGoneError extends Error {
  constructor() {
    super('the client closed the connection before the end of the body');
    this.name = 'ClientGoneError';
  }
}
