import { ReconError } from '../errors.ts';
import { describeExecCode } from '@recon/protocol';

/** The service answered, with an EXECCODE outside the success family (0xxx). */
export class ServiceError extends ReconError {
  readonly operation: string;
  readonly execCode: string;
  readonly serviceMessage: string;

  constructor(operation: string, execCode: string, serviceMessage: string) {
    const detail = serviceMessage === '' ? '' : `: ${serviceMessage.replace(/\s*\n\s*/g, ' ')}`;
    super('SERVICE_ERROR', `${operation} answered EXECCODE ${execCode} (${describeExecCode(execCode)})${detail}`);
    this.name = 'ServiceError';
    this.operation = operation;
    this.execCode = execCode;
    this.serviceMessage = serviceMessage;
  }
}
