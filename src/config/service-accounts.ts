import { readFileSync } from 'node:fs';
import { parseAccountList, type ListedAccount } from '@recon/protocol';
import { ReconError } from '../errors.ts';

/** One processing account of the merchant at the service; its secret signs its requests and checks its notifications. */
export type ServiceAccount = ListedAccount;

/** The variables that may describe the accounts (see docs/configuration.md). */
export interface AccountVariables {
  readonly RECON_ACCOUNTS?: string | undefined;
  readonly RECON_ACCOUNTS_FILE?: string | undefined;
  readonly RECON_IDENTIFIER?: string | undefined;
  readonly RECON_SECRET?: string | undefined;
}

/**
 * The merchant's accounts: RECON_ACCOUNTS (a JSON array) or the JSON file RECON_ACCOUNTS_FILE names, each entry
 * `{"identifier", "secret" | "secret_env", "group"?, "payment_methods"?}`; otherwise the single pair RECON_IDENTIFIER
 * and RECON_SECRET as one account; otherwise none. Errors name the variable, the entry and the field, never a secret.
 */
export function loadServiceAccounts(env: AccountVariables & Record<string, string | undefined>): ServiceAccount[] {
  const listed = env.RECON_ACCOUNTS?.trim() ? 'RECON_ACCOUNTS' : undefined;
  const filed = env.RECON_ACCOUNTS_FILE?.trim() ? 'RECON_ACCOUNTS_FILE' : undefined;
  if (listed && filed) {
    throw new ReconError('CONFIG', 'RECON_ACCOUNTS and RECON_ACCOUNTS_FILE are both set: set one of them');
  }
  const source = listed ?? filed;
  if (source === undefined) {
    if (env.RECON_IDENTIFIER === undefined || env.RECON_SECRET === undefined) return [];
    return [
      { identifier: env.RECON_IDENTIFIER, secret: env.RECON_SECRET, group: undefined, paymentMethods: undefined },
    ];
  }
  if (env.RECON_IDENTIFIER !== undefined || env.RECON_SECRET !== undefined) {
    throw new ReconError(
      'CONFIG',
      `${source} is set beside RECON_IDENTIFIER or RECON_SECRET: list every account in ${source} and unset the pair`,
    );
  }
  const where = source === 'RECON_ACCOUNTS' ? 'RECON_ACCOUNTS' : `RECON_ACCOUNTS_FILE (${env.RECON_ACCOUNTS_FILE})`;
  const text = source === 'RECON_ACCOUNTS' ? env.RECON_ACCOUNTS! : readAccountsFile(env.RECON_ACCOUNTS_FILE!.trim());
  const parsed = parseAccountList(text, env);
  if ('refused' in parsed) {
    const { refused } = parsed;
    throw new ReconError(
      'CONFIG',
      refused.kind === 'json'
        ? `${where} is not valid JSON: expected an array of accounts`
        : `${where}: ${refused.problem}`,
    );
  }
  return parsed.accounts.map((account) => Object.freeze(account));
}

function readAccountsFile(file: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? 'unreadable';
    throw new ReconError('CONFIG', `RECON_ACCOUNTS_FILE (${file}) cannot be read: ${code}`);
  }
}
