import { parseArgs } from 'node:util';
import { z } from 'zod';
import { CALLBACK_FORMATS, type CallbackFormat } from '../export/callback-switches.ts';
import type { SandboxAccount } from '../sandbox-accounts.ts';
import { SandboxError } from '../sandbox-error.ts';
import { sandboxAccountList } from './sandbox-account-list.ts';

/** How `recon sandbox` (or `recon-sandbox`) is set up: each from a flag, else a RECON_SANDBOX_* variable, else a default. */
export interface SandboxSettings {
  readonly port: number;
  readonly host: string;
  /**
   * The merchant accounts served: the list of `--accounts` (RECON_SANDBOX_ACCOUNTS), else the one account of
   * `--identifier` and `--secret`.
   */
  readonly accounts: readonly SandboxAccount[];
  /** Where notifications are POSTed; recorded only when absent. */
  readonly notifyUrl: string | undefined;
  /** `HOST:PORT` of the SMTP server for MAILTO exports; MAILTO refused when absent. */
  readonly smtp: string | undefined;
  /** Start from the deterministic scenario of this seed; an empty store when undefined. */
  readonly seed: number | undefined;
  readonly callbackFormat: CallbackFormat;
  /** The first N CALLBACKURL deliveries are lost (never sent, answered 0000 all the same). */
  readonly dropCallbacks: number;
  /** Every CALLBACKURL delivery is sent twice. */
  readonly duplicateCallbacks: boolean;
  /** Where to write the seeded scenario's orders csv (needs `seed`). */
  readonly ordersOut: string | undefined;
  /** Transactions younger than this (sandbox clock) are left out of every export. */
  readonly exportLagSeconds: number;
}

/**
 * A whole number in plain decimal digits from `min` to `max`: JavaScript's Number would read `1e3` as 1000 and
 * `0x10` as 16, a mistake to refuse rather than a number to guess.
 */
function wholeNumber(min: number, max: number = Number.MAX_SAFE_INTEGER) {
  const said =
    max === Number.MAX_SAFE_INTEGER
      ? `expected a whole number of ${min} or more, in decimal digits`
      : `expected a whole number from ${min} to ${max}, in decimal digits`;
  return z
    .string({ error: said })
    .trim()
    .regex(/^\d{1,16}$/, said)
    .transform(Number)
    .refine((value) => value >= min && value <= max, said);
}

const port = wholeNumber(0, 65_535);
const host = z.string().min(1);
const identifier = z.string().min(1).max(32);
const secret = z.string().min(1);
const notifyUrl = z.url({ protocol: /^https?$/ });
const smtp = z.string().regex(/^[^:]+:\d+$/, 'expected HOST:PORT');
const seed = wholeNumber(0, 2 ** 32 - 1);
const callbackFormat = z.enum(CALLBACK_FORMATS);
const count = wholeNumber(0);
const path = z.string().min(1);
const accountList = z.string().trim().min(1);

const ENV = z.object({
  RECON_SANDBOX_PORT: port.default(8080),
  RECON_SANDBOX_HOST: host.default('127.0.0.1'),
  RECON_SANDBOX_IDENTIFIER: identifier.default('sandbox-merchant'),
  RECON_SANDBOX_SECRET: secret.default('sandbox-secret'),
  RECON_SANDBOX_ACCOUNTS: accountList.optional(),
  RECON_SANDBOX_NOTIFY_URL: notifyUrl.optional(),
  RECON_SANDBOX_SMTP: smtp.optional(),
  RECON_SANDBOX_SEED: seed.optional(),
  RECON_SANDBOX_CALLBACK_FORMAT: callbackFormat.default('multipart'),
  RECON_SANDBOX_DROP_CALLBACKS: count.default(0),
  RECON_SANDBOX_DUPLICATE_CALLBACKS: z.stringbool().default(false),
  RECON_SANDBOX_ORDERS_OUT: path.optional(),
  RECON_SANDBOX_EXPORT_LAG_SECONDS: count.default(0),
});

/** The same rules as the variables, so a flag and a variable accept the same values. */
const FLAG_RULES = {
  port,
  host,
  identifier,
  secret,
  accounts: accountList,
  'notify-url': notifyUrl,
  smtp,
  seed,
  'callback-format': callbackFormat,
  'drop-callbacks': count,
  'orders-out': path,
  'export-lag-seconds': count,
};

export const OPTIONS = {
  ...(Object.fromEntries(Object.keys(FLAG_RULES).map((name) => [name, { type: 'string' }])) as Record<
    keyof typeof FLAG_RULES,
    { type: 'string' }
  >),
  'duplicate-callbacks': { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const;

/** Flags win over variables, variables over defaults; a bad value is a USAGE SandboxError naming the flag or variable. */
export function readSandboxSettings(
  argv: readonly string[],
  env: NodeJS.ProcessEnv,
): { help: boolean; settings: SandboxSettings } {
  let values;
  try {
    ({ values } = parseArgs({ args: [...argv], options: OPTIONS, strict: true }));
  } catch (error) {
    throw new SandboxError('USAGE', (error as Error).message, { cause: error });
  }
  const parsedEnv = ENV.safeParse(env);
  if (!parsedEnv.success) {
    // Every variable to fix in the one line, not one per start.
    const problems = new Map<string, string>();
    for (const issue of parsedEnv.error.issues) {
      const variable = issue.path.join('.');
      if (!problems.has(variable)) problems.set(variable, `invalid environment variable ${variable}: ${issue.message}`);
    }
    const said = [...problems.values()];
    throw new SandboxError(
      'USAGE',
      said.length === 1
        ? said[0]!
        : `${said.length} settings to fix: ${said.map((problem, index) => `(${index + 1}) ${problem}`).join('; ')}`,
    );
  }
  const e = parsedEnv.data;
  const flag = <K extends keyof typeof FLAG_RULES>(name: K): z.infer<(typeof FLAG_RULES)[K]> | undefined => {
    const value = (values as Partial<Record<string, string>>)[name];
    if (value === undefined) return undefined;
    const parsed = FLAG_RULES[name].safeParse(value);
    if (!parsed.success)
      throw new SandboxError('USAGE', `invalid --${name} ${JSON.stringify(value)}: ${parsed.error.issues[0]!.message}`);
    return parsed.data as z.infer<(typeof FLAG_RULES)[K]>;
  };
  return {
    help: values.help === true,
    settings: {
      port: flag('port') ?? e.RECON_SANDBOX_PORT,
      host: flag('host') ?? e.RECON_SANDBOX_HOST,
      accounts: accountsSetting(
        { accounts: flag('accounts'), identifier: flag('identifier'), secret: flag('secret') },
        e,
        env,
      ),
      notifyUrl: flag('notify-url') ?? e.RECON_SANDBOX_NOTIFY_URL,
      smtp: flag('smtp') ?? e.RECON_SANDBOX_SMTP,
      seed: flag('seed') ?? e.RECON_SANDBOX_SEED,
      callbackFormat: flag('callback-format') ?? e.RECON_SANDBOX_CALLBACK_FORMAT,
      dropCallbacks: flag('drop-callbacks') ?? e.RECON_SANDBOX_DROP_CALLBACKS,
      duplicateCallbacks: values['duplicate-callbacks'] ?? e.RECON_SANDBOX_DUPLICATE_CALLBACKS,
      ordersOut: flag('orders-out') ?? e.RECON_SANDBOX_ORDERS_OUT,
      exportLagSeconds: flag('export-lag-seconds') ?? e.RECON_SANDBOX_EXPORT_LAG_SECONDS,
    },
  };
}

/**
 * The list wins over the single pair at the level it is given (flags over variables); naming both at one level is a
 * mistake the command refuses rather than guess at.
 */
function accountsSetting(
  flags: { accounts: string | undefined; identifier: string | undefined; secret: string | undefined },
  e: z.infer<typeof ENV>,
  env: NodeJS.ProcessEnv,
): SandboxAccount[] {
  const pairFlag = flags.identifier !== undefined || flags.secret !== undefined;
  if (flags.accounts !== undefined) {
    if (pairFlag) throw new SandboxError('USAGE', '--accounts lists every account: drop --identifier and --secret');
    return sandboxAccountList(flags.accounts, '--accounts', env);
  }
  if (!pairFlag && e.RECON_SANDBOX_ACCOUNTS !== undefined) {
    if (env['RECON_SANDBOX_IDENTIFIER'] !== undefined || env['RECON_SANDBOX_SECRET'] !== undefined) {
      throw new SandboxError(
        'USAGE',
        'RECON_SANDBOX_ACCOUNTS lists every account: unset RECON_SANDBOX_IDENTIFIER and RECON_SANDBOX_SECRET',
      );
    }
    return sandboxAccountList(e.RECON_SANDBOX_ACCOUNTS, 'environment variable RECON_SANDBOX_ACCOUNTS', env);
  }
  return [
    { identifier: flags.identifier ?? e.RECON_SANDBOX_IDENTIFIER, secret: flags.secret ?? e.RECON_SANDBOX_SECRET },
  ];
}

/** `HOST:PORT` of an SMTP server. */
export function parseSmtp(value: string): { host: string; port: number } {
  const separator = value.lastIndexOf(':');
  const smtpPort = Number(value.slice(separator + 1));
  if (smtpPort < 1 || smtpPort > 65535)
    throw new SandboxError('USAGE', `invalid SMTP server ${JSON.stringify(value)}: port must be 1-65535`);
  return { host: value.slice(0, separator), port: smtpPort };
}
