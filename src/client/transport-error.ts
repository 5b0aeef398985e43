import { ReconError } from '../errors.ts';

/**
 * A request that got no usable HTTP answer. `neverSent` is true only when the request provably never
 * reached the service (the connection was refused), the one case where repeating a payment operation
 * cannot move money twice.
 */
export class TransportError extends ReconError {
  readonly neverSent: boolean;

  constructor(code: 'NETWORK' | 'TIMEOUT', message: string, options: { neverSent: boolean; cause?: unknown }) {
    super(code, message, { cause: options.cause });
    this.name = 'TransportError';
    this.neverSent = options.neverSent;
  }
}
