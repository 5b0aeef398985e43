import { missingParameter, ProtocolError, verifyHash, type Params } from '@recon/protocol';
import { ProcessRefusal } from './process/process-answer.ts';
import type { SandboxAccount, SandboxAccounts } from './sandbox-accounts.ts';

/**
 * The envelope check both endpoints make before reading anything else: IDENTIFIER, then HASH with that account's
 * secret, so a caller without the secret learns nothing about the rest of its request. Returns the account; throws
 * ProtocolError 1001 (missing) or 1003 (HASH), or ProcessRefusal 3001 for an account the sandbox does not serve.
 */
export function authenticateRequest(accounts: SandboxAccounts, params: Params): SandboxAccount {
  const identifier = params['IDENTIFIER'];
  if (typeof identifier !== 'string' || identifier === '') throw missingParameter('IDENTIFIER');
  if (params['HASH'] === undefined) throw missingParameter('HASH');
  const account = accounts.find(identifier);
  if (!account) {
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
  return account;
}
