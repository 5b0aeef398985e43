import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { ReconError } from '../errors.ts';
import type { PaymentMethod } from '../db/schema.ts';
import { PAYMENT_METHODS } from '../orders/order-row.ts';

/** One processing account of the merchant at the service: its IDENTIFIER and the secret that signs for it. */
export interface ServiceAccount {
  readonly identifier: string;
  /** The HASH key: signs this account's requests, verifies its notifications. */
  readonly secret: string;
  /** Accounts of one group are exported together, by one request with SCOPE=CLIENTSGROUP. */
  readonly group: string | undefined;
  /** The payment methods this account serves; undefined: any. */
  readonly paymentMethods: readonly PaymentMethod[] | undefined;
}

/** The variables that may describe the accounts (see docs/configuration.md). */
export interface AccountVariables {
  readonly RECON_ACCOUNTS?: string | undefined;
  readonly RECON_ACCOUNTS_FILE?: string | undefined;
  readonly RECON_IDENTIFIER?: string | undefined;
  readonly RECON_SECRET?: string | undefined;
}

/** Far beyond any merchant's accounts, and few enough that a night's requests stay bounded. */
export const MAX_ACCOUNTS = 50;

const IDENTIFIER = z.string().trim().min(1).max(32);
const VARIABLE_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

const AccountEntry = z
  .object({
    identifier: IDENTIFIER,
    secret: z.string().min(1).optional(),
    secret_env: z.string().regex(VARIABLE_NAME, 'expected the name of an environment variable').optional(),
    group: z.string().trim().min(1).max(64).optional(),
    payment_methods: z
      .array(z.enum(PAYMENT_METHODS))
      .min(1)
      .refine((methods) => new Set(methods).size === methods.length, 'lists a payment method twice')
      .optional(),
  })
  .strict()
  .refine((entry) => (entry.secret === undefined) !== (entry.secret_env === undefined), {
    message: 'expected exactly one of secret or secret_env',
  });

const AccountList = z.array(AccountEntry).min(1).max(MAX_ACCOUNTS);

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
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    // JSON.parse's message quotes the text, which holds secrets.
    throw new ReconError('CONFIG', `${where} is not valid JSON: expected an array of accounts`);
  }
  const parsed = AccountList.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const [index, ...field] = issue.path;
    const entry = typeof index === 'number' ? `account ${index + 1}` : 'the list';
    const name = field.length > 0 ? ` field ${field.join('.')}` : '';
    throw new ReconError('CONFIG', `${where}: ${entry}${name}: ${issue.message}`);
  }
  const accounts = parsed.data.map((entry, index): ServiceAccount => {
    let secret = entry.secret;
    if (entry.secret_env !== undefined) {
      secret = env[entry.secret_env];
      if (!secret) {
        throw new ReconError(
          'CONFIG',
          `${where}: account ${index + 1} (${entry.identifier}) reads its secret from ${entry.secret_env}, which is not set`,
        );
      }
    }
    return {
      identifier: entry.identifier,
      secret: secret!,
      group: entry.group,
      paymentMethods: entry.payment_methods,
    };
  });
  const seen = new Set<string>();
  for (const account of accounts) {
    if (seen.has(account.identifier)) {
      throw new ReconError('CONFIG', `${where}: IDENTIFIER ${account.identifier} is listed twice`);
    }
    seen.add(account.identifier);
  }
  return accounts.map((account) => Object.freeze(account));
}

function readAccountsFile(file: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? 'unreadable';
    throw new ReconError('CONFIG', `RECON_ACCOUNTS_FILE (${file}) cannot be read: ${code}`);
  }
}
