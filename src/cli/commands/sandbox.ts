import { z } from 'zod';
import { loadConfig, type SandboxConfig } from '../../config/config.ts';
import { describeError, ReconError } from '../../errors.ts';
import { checkOutputFolder, writeFileAtomically } from '../../report/report-output.ts';
import { CALLBACK_FORMATS } from '../../sandbox/export/callback-switches.ts';
import { formatOrdersCsv } from '../../sandbox/scenario/orders-csv.ts';
import { scenarioOrders } from '../../sandbox/scenario/scenario-orders.ts';
import { createSandbox, type SandboxEvent } from '../../sandbox/sandbox.ts';
import { parseCommandArgs, type CommandContext } from '../command.ts';
import { EXIT } from '../exit-codes.ts';

const HELP = `usage: recon sandbox [options]

Serves a local sandbox of the payment service: POST {base}/front/service/rest/process and /export,
the cardholder page, and the clock at {base}/sandbox/clock. Prints the base URL, serves until SIGINT/SIGTERM.

options (each also read from the environment variable shown; flags win):
  --port P             port to listen on, 0 for any free one   RECON_SANDBOX_PORT (8080)
  --host H             address to listen on                    RECON_SANDBOX_HOST (127.0.0.1)
  --identifier ID      the merchant account's IDENTIFIER       RECON_SANDBOX_IDENTIFIER (sandbox-merchant)
  --secret S           the account's secret (HASH key)         RECON_SANDBOX_SECRET (sandbox-secret)
  --notify-url URL     where notifications are POSTed          RECON_SANDBOX_NOTIFY_URL (none: recorded only)
  --smtp HOST:PORT     SMTP server for MAILTO exports          RECON_SANDBOX_SMTP (none: MAILTO refused)
  --seed N             start with the deterministic scenario   RECON_SANDBOX_SEED (none: empty)
                       of seed N (orders of both methods, every outcome)
  --orders-out FILE    with --seed: writes the scenario's      RECON_SANDBOX_ORDERS_OUT (none)
                       orders as a csv for recon import-orders,
                       one deliberate mistake of each kind a
                       reconciliation finds (most orders match)
  --export-lag-seconds N
                       transactions younger than N seconds by  RECON_SANDBOX_EXPORT_LAG_SECONDS (0)
                       the sandbox clock are left out of every
                       export (JSON, CALLBACKURL, MAILTO)

switches for testing a receiver of CALLBACKURL exports:
  --callback-format F  multipart: the file in part "file" of   RECON_SANDBOX_CALLBACK_FORMAT (multipart)
                       a form upload; raw: the compressed bytes
                       as the body, Content-Type application/zip,
                       application/gzip or application/x-bzip2
  --drop-callbacks N   the first N deliveries are lost: never  RECON_SANDBOX_DROP_CALLBACKS (0)
                       sent, though their requests answer 0000
  --duplicate-callbacks
                       every delivery is sent twice, the       RECON_SANDBOX_DUPLICATE_CALLBACKS (false)
                       second once the first succeeded or failed

The clock: GET {base}/sandbox/clock answers ISO 8601; POST it {"advanceDays": n} to move it forward.
`;

const OPTIONS = {
  port: { type: 'string' },
  host: { type: 'string' },
  identifier: { type: 'string' },
  secret: { type: 'string' },
  'notify-url': { type: 'string' },
  smtp: { type: 'string' },
  seed: { type: 'string' },
  'callback-format': { type: 'string' },
  'drop-callbacks': { type: 'string' },
  'duplicate-callbacks': { type: 'boolean' },
  'orders-out': { type: 'string' },
  'export-lag-seconds': { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

/** The same rules as the RECON_SANDBOX_* variables, so a flag and a variable accept the same values. */
const FLAG_RULES = {
  port: z.coerce.number().int().min(0).max(65535),
  host: z.string().min(1),
  identifier: z.string().min(1).max(32),
  secret: z.string().min(1),
  'notify-url': z.url({ protocol: /^https?$/ }),
  smtp: z.string().regex(/^[^:]+:\d+$/, 'expected HOST:PORT'),
  seed: z.coerce.number().int().min(0).max(2 ** 32 - 1),
  'callback-format': z.enum(CALLBACK_FORMATS),
  'drop-callbacks': z.coerce.number().int().min(0),
  'orders-out': z.string().min(1),
  'export-lag-seconds': z.coerce.number().int().min(0),
};

export async function run(ctx: CommandContext): Promise<number> {
  const { values } = parseCommandArgs(ctx.argv, OPTIONS);
  if (values.help) {
    ctx.stdout.write(HELP);
    return EXIT.ok;
  }
  const settings = resolveSettings(loadConfig(ctx.env).sandbox, values);
  const { seed, ordersOut } = settings;
  if (ordersOut !== undefined && seed === undefined) {
    throw new ReconError('USAGE', '--orders-out writes the orders of a seeded scenario: give --seed N (or RECON_SANDBOX_SEED) too');
  }
  if (ordersOut !== undefined) await checkOutputFolder(ordersOut);
  const sandbox = createSandbox({
    identifier: settings.identifier,
    secret: settings.secret,
    ...(settings.notifyUrl ? { notifyUrl: settings.notifyUrl } : {}),
    ...(settings.smtp ? { smtp: parseSmtp(settings.smtp) } : {}),
    ...(seed === undefined ? {} : { seed }),
    callbackFormat: settings.callbackFormat,
    dropCallbacks: settings.dropCallbacks,
    duplicateCallbacks: settings.duplicateCallbacks,
    exportLagSeconds: settings.exportLagSeconds,
    onEvent: (event) => ctx.stderr.write(`sandbox: ${describeEvent(event)}\n`),
  });
  // Written before the base URL is printed: whoever waits for the URL finds the file complete.
  if (ordersOut !== undefined) {
    const orders = scenarioOrders(sandbox.store, sandbox.scenario!, sandbox.clock.now());
    const written = await writeFileAtomically(ordersOut, [formatOrdersCsv(orders)]).catch(async (error: unknown) => {
      await sandbox.close();
      throw error;
    });
    const kept = orders.filter((order) => order.order !== undefined).length;
    ctx.stderr.write(`sandbox: wrote ${kept} orders of the scenario to ${written}\n`);
  }
  const baseUrl = await sandbox.listen(settings.port, settings.host).catch((error: unknown) => {
    throw new ReconError('USAGE', `cannot listen on ${settings.host}:${settings.port}: ${describeError(error)}`, { cause: error });
  });
  ctx.stdout.write(`${baseUrl}\n`);
  // Without a notify URL nothing about notifications would ever show: say so once.
  const notifications = settings.notifyUrl ? `notifications to ${settings.notifyUrl}` : 'notifications recorded, not sent (no --notify-url)';
  ctx.stderr.write(`sandbox: account ${settings.identifier}; ${notifications}\n`);
  if (sandbox.scenario) {
    const { seed: used, orderIds, transactionCount } = sandbox.scenario;
    ctx.stderr.write(`sandbox: seeded scenario ${used}: ${orderIds.length} orders, ${transactionCount} transactions\n`);
  }
  await abortion(ctx.signal);
  await sandbox.close();
  return EXIT.ok;
}

type FlagValues = Partial<Record<keyof typeof FLAG_RULES, string>> & { readonly 'duplicate-callbacks'?: boolean };

function resolveSettings(fromEnv: SandboxConfig, flags: FlagValues): SandboxConfig {
  const flag = <K extends keyof typeof FLAG_RULES>(name: K) => {
    const value = flags[name];
    return value === undefined ? undefined : parseFlag(name, value);
  };
  return {
    port: flag('port') ?? fromEnv.port,
    host: flag('host') ?? fromEnv.host,
    identifier: flag('identifier') ?? fromEnv.identifier,
    secret: flag('secret') ?? fromEnv.secret,
    notifyUrl: flag('notify-url') ?? fromEnv.notifyUrl,
    smtp: flag('smtp') ?? fromEnv.smtp,
    seed: flag('seed') ?? fromEnv.seed,
    callbackFormat: flag('callback-format') ?? fromEnv.callbackFormat,
    dropCallbacks: flag('drop-callbacks') ?? fromEnv.dropCallbacks,
    duplicateCallbacks: flags['duplicate-callbacks'] ?? fromEnv.duplicateCallbacks,
    ordersOut: flag('orders-out') ?? fromEnv.ordersOut,
    exportLagSeconds: flag('export-lag-seconds') ?? fromEnv.exportLagSeconds,
  };
}

function parseFlag<K extends keyof typeof FLAG_RULES>(name: K, value: string): z.infer<(typeof FLAG_RULES)[K]> {
  const parsed = FLAG_RULES[name].safeParse(value);
  if (!parsed.success) throw new ReconError('USAGE', `invalid --${name} ${JSON.stringify(value)}: ${parsed.error.issues[0]!.message}`);
  return parsed.data as z.infer<(typeof FLAG_RULES)[K]>;
}

function parseSmtp(value: string): { host: string; port: number } {
  const separator = value.lastIndexOf(':');
  const port = Number(value.slice(separator + 1));
  if (port < 1 || port > 65535) throw new ReconError('USAGE', `invalid SMTP server ${JSON.stringify(value)}: port must be 1-65535`);
  return { host: value.slice(0, separator), port };
}

function abortion(signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.resolve();
  return new Promise((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
}

function describeEvent(event: SandboxEvent): string {
  switch (event.type) {
    case 'notification': {
      const { delivery } = event.event;
      const subject = `notification ${delivery.fields['OPERATIONTYPE']} ${delivery.fields['TRANSACTIONID']}`;
      if (event.event.type === 'delivered') return `${subject} delivered (attempt ${delivery.attempts})`;
      if (event.event.type === 'retrying') return `${subject} attempt ${delivery.attempts} failed (${delivery.lastError}); retrying in ${event.event.delayMs} ms`;
      return `${subject} given up after ${delivery.attempts} attempts: ${delivery.lastError}`;
    }
    case 'export-failed':
      return `export delivery ${event.label} failed: ${describeError(event.error)}`;
    case 'export-dropped':
      return `export delivery ${event.label} dropped on purpose (--drop-callbacks): never sent`;
    case 'internal-error':
      return `internal error: ${describeError(event.error)}`;
  }
}
