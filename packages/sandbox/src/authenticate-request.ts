import { missingParameter, ProtocolError, verifyHash, type Params } from '@recon/protocol';
import { ProcessRefusal } from './process/process-answer.ts';

export interface SandboxAccount {
  readonly identifier: string;
  readonly secret: string;
}

/**
 * The envelope check both endpoints make before reading anything else: IDENTIFIER, then HASH, so a caller
 * without the secret learns nothing about the rest of its request. Throws ProtocolError 1001 (missing) or
 * 1003 (HASH), or ProcessRefusal 3001 for an account the sandbox does not serve.
 */
export function authenticateRequest(account: SandboxAccount, params: Params): void {
  const identifier = params['IDENTIFIER'];
  if (typeof identifier !== 'string' || identifier === '') throw missingParameter('IDENTIFIER');
  if (params['HASH'] === undefined) throw missingParameter('HASH');
  if (identifier !== account.identifier) {
    throw new ProcessRefusal(
      '3001',
      `IDENTIFIER ${JSON.stringify(identifier)} names no active account of this service`,
    );
  }
  if (!verifyHash(account.secret, params)) {
    throw new ProtocolError('1003', 'HASH does not match the parameters signed with the account secret', {
      field: 'HASH',
    });
  }
}
