/**
 * What the sandbox cannot do for a request (an export it cannot compress, deliver or mail): a one-line message, and
 * a stable code the caller branches on. The sandbox is a package of its own: it does not throw recon's errors.
 */
export class SandboxError extends Error {
  /** USAGE: a bad flag or variable (exit 1); CONFIG: a setting the machine cannot honour; NETWORK: a peer failed. */
  readonly code: 'USAGE' | 'CONFIG' | 'NETWORK';

  constructor(code: SandboxError['code'], message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'SandboxError';
    this.code = code;
  }
}
