import { EXEC_CODES, type ExecCode } from '@recon/protocol';

/** A process endpoint's answer: a JSON object with the spec's field names (result envelope + E2-E5 fields). */
export interface ProcessAnswer {
  readonly OPERATIONTYPE: string;
  readonly EXECCODE: string;
  readonly MESSAGE: string;
  readonly DESCRIPTOR?: string;
  readonly TRANSACTIONID?: string;
  readonly REDIRECTHTML?: string;
}

/**
 * A rule the request breaks, as the code and message the service answers. Thrown inside the sandbox's
 * operations and turned into an answer at the endpoint; it never leaves the sandbox.
 */
export class ProcessRefusal extends Error {
  readonly execCode: ExecCode;

  constructor(execCode: ExecCode, detail: string) {
    super(`${capitalize(EXEC_CODES[execCode])}: ${detail}`);
    this.name = 'ProcessRefusal';
    this.execCode = execCode;
  }
}

function capitalize(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}
