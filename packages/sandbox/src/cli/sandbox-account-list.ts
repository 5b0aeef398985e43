import { z } from 'zod';
import type { SandboxAccount } from '../sandbox-accounts.ts';
import { SandboxError } from '../sandbox-error.ts';

const VARIABLE_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** One entry, written as recon's RECON_ACCOUNTS writes it, so one list can configure both ends. */
const AccountEntry = z
  .object({
    identifier: z.string().min(1).max(32),
    secret: z.string().min(1).optional(),
    secret_env: z.string().regex(VARIABLE_NAME, 'expected the name of an environment variable').optional(),
    group: z.string().min(1).max(64).optional(),
    payment_methods: z
      .array(z.enum(['instalment', 'wallet']))
      .min(1)
      .refine((methods) => new Set(methods).size === methods.length, 'lists a payment method twice')
      .optional(),
  })
  .strict()
  .refine((entry) => (entry.secret === undefined) !== (entry.secret_env === undefined), {
    message: 'expected exactly one of secret or secret_env',
  });

const AccountList = z.array(AccountEntry).min(1).max(50);

/**
 * The accounts of `--accounts` or RECON_SANDBOX_ACCOUNTS: a JSON array of `{"identifier", "secret" | "secret_env",
 * "group"?, "payment_methods"?}`. A USAGE SandboxError names `where`, the entry and the field, never a secret.
 */
export function parseAccountList(text: string, where: string, env: NodeJS.ProcessEnv): SandboxAccount[] {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    // JSON.parse's message quotes the text, which holds secrets.
    throw new SandboxError('USAGE', `invalid ${where}: not valid JSON, expected an array of accounts`);
  }
  const parsed = AccountList.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const [index, ...field] = issue.path;
    const entry = typeof index === 'number' ? `account ${index + 1}` : 'the list';
    const name = field.length > 0 ? ` field ${field.join('.')}` : '';
    throw new SandboxError('USAGE', `invalid ${where}: ${entry}${name}: ${issue.message}`);
  }
  const seen = new Set<string>();
  return parsed.data.map((entry, index) => {
    if (seen.has(entry.identifier)) {
      throw new SandboxError('USAGE', `invalid ${where}: IDENTIFIER ${entry.identifier} is listed twice`);
    }
    seen.add(entry.identifier);
    const secret = entry.secret ?? env[entry.secret_env!];
    if (!secret) {
      throw new SandboxError(
        'USAGE',
        `invalid ${where}: account ${index + 1} (${entry.identifier}) reads its secret from ${entry.secret_env}, which is not set`,
      );
    }
    return {
      identifier: entry.identifier,
      secret,
      ...(entry.group === undefined ? {} : { group: entry.group }),
      ...(entry.payment_methods === undefined ? {} : { paymentMethods: entry.payment_methods }),
    };
  });
}
