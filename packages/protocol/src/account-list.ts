import { z } from 'zod';
import type { PaymentMethod } from './operation-fields.ts';

/** A merchant's processing account at the service: its IDENTIFIER, the secret that signs for it, group and methods. */
export interface ListedAccount {
  readonly identifier: string;
  readonly secret: string;
  /** Accounts of one group are exported together (SCOPE=CLIENTSGROUP). */
  readonly group: string | undefined;
  /** The payment methods the account serves; undefined: any. */
  readonly paymentMethods: readonly PaymentMethod[] | undefined;
}

/** Far beyond any merchant's accounts, and few enough that a night's requests stay bounded. */
export const MAX_LISTED_ACCOUNTS = 50;

const VARIABLE_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
const PAYMENT_METHODS = ['instalment', 'wallet'] as const satisfies readonly PaymentMethod[];

const AccountEntry = z
  .object({
    identifier: z.string().trim().min(1).max(32),
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

const AccountList = z.array(AccountEntry).min(1).max(MAX_LISTED_ACCOUNTS);

/**
 * Why a list was refused: `json` when the text is no JSON at all, otherwise `problem` names the entry and the field
 * ('account 2 field payment_methods.0: ...'). Never a secret: JSON.parse's own message would quote the text.
 */
export type AccountListRefusal = { readonly kind: 'json' } | { readonly kind: 'entry'; readonly problem: string };

/**
 * The accounts of a JSON array `[{"identifier", "secret" | "secret_env", "group"?, "payment_methods"?}]`, the one
 * format recon's RECON_ACCOUNTS and the sandbox's --accounts share, so one list configures both ends. A secret_env
 * is read from `env`. Each caller turns a refusal into its own error, naming where the list came from.
 */
export function parseAccountList(
  text: string,
  env: Readonly<Record<string, string | undefined>>,
): { readonly accounts: ListedAccount[] } | { readonly refused: AccountListRefusal } {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return { refused: { kind: 'json' } };
  }
  const parsed = AccountList.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const [index, ...field] = issue.path;
    const entry = typeof index === 'number' ? `account ${index + 1}` : 'the list';
    const name = field.length > 0 ? ` field ${field.join('.')}` : '';
    return { refused: { kind: 'entry', problem: `${entry}${name}: ${issue.message}` } };
  }
  const seen = new Set<string>();
  const accounts: ListedAccount[] = [];
  for (const [index, entry] of parsed.data.entries()) {
    if (seen.has(entry.identifier)) {
      return { refused: { kind: 'entry', problem: `IDENTIFIER ${entry.identifier} is listed twice` } };
    }
    seen.add(entry.identifier);
    const secret = entry.secret ?? env[entry.secret_env!];
    if (!secret) {
      const problem = `account ${index + 1} (${entry.identifier}) reads its secret from ${entry.secret_env}, which is not set`;
      return { refused: { kind: 'entry', problem } };
    }
    accounts.push({
      identifier: entry.identifier,
      secret,
      group: entry.group,
      paymentMethods: entry.payment_methods,
    });
  }
  return { accounts };
}
