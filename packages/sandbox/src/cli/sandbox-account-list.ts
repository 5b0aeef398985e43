import { parseAccountList } from '@recon/protocol';
import type { SandboxAccount } from '../sandbox-accounts.ts';
import { SandboxError } from '../sandbox-error.ts';

/**
 * The accounts of `--accounts` or RECON_SANDBOX_ACCOUNTS, in the format of recon's RECON_ACCOUNTS (the protocol
 * package's parseAccountList). A USAGE SandboxError names `where`, the entry and the field, never a secret.
 */
export function sandboxAccountList(text: string, where: string, env: NodeJS.ProcessEnv): SandboxAccount[] {
  const parsed = parseAccountList(text, env);
  if ('refused' in parsed) {
    const { refused } = parsed;
    throw new SandboxError(
      'USAGE',
      refused.kind === 'json'
        ? `invalid ${where}: not valid JSON, expected an array of accounts`
        : `invalid ${where}: ${refused.problem}`,
    );
  }
  return parsed.accounts.map((account) => ({
    identifier: account.identifier,
    secret: account.secret,
    ...(account.group === undefined ? {} : { group: account.group }),
    ...(account.paymentMethods === undefined ? {} : { paymentMethods: account.paymentMethods }),
  }));
}
