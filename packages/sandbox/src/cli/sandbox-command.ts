import { randomBytes } from 'node:crypto';
import { rename, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { createSandbox, type Sandbox, type SandboxEvent, type SandboxOptions } from '../sandbox.ts';
import type { SandboxAccount } from '../sandbox-accounts.ts';
import { SandboxError } from '../sandbox-error.ts';
import { formatOrdersCsv } from '../scenario/orders-csv.ts';
import { createNotificationLog } from './notification-log.ts';
import { scenarioOrders } from '../scenario/scenario-orders.ts';
import { parseSmtp, readSandboxSettings } from './sandbox-settings.ts';

/** The command's flags, as node:util parseArgs takes them: for whoever documents them. */
export { OPTIONS } from './sandbox-settings.ts';

/** Where the command reads its arguments and writes: recon's CLI passes its own, the package's bin the process's. */
export interface SandboxCommandContext {
  readonly argv: string[];
  readonly env: NodeJS.ProcessEnv;
  readonly stdout: NodeJS.WritableStream;
  readonly stderr: NodeJS.WritableStream;
  readonly signal: AbortSignal;
}

const HELP = `usage: recon sandbox [options]   (or: recon-sandbox [options])

Serves a local sandbox of the payment service: POST {base}/front/service/rest/process and /export,
the cardholder page, and the clock at {base}/sandbox/clock. Prints the base URL, serves until SIGINT/SIGTERM.

options (each also read from the environment variable shown; flags win):
  --port P             port to listen on, 0 for any free one   RECON_SANDBOX_PORT (8080)
  --host H             address to listen on                    RECON_SANDBOX_HOST (127.0.0.1)
  --identifier ID      the merchant account's IDENTIFIER       RECON_SANDBOX_IDENTIFIER (sandbox-merchant)
  --secret S           the account's secret (HASH key)         RECON_SANDBOX_SECRET (sandbox-secret)
  --accounts JSON      several accounts instead, as recon's    RECON_SANDBOX_ACCOUNTS (none)
                       RECON_ACCOUNTS lists them: [{"identifier",
                       "secret" or "secret_env", "group"?,
                       "payment_methods"?: ["instalment"|"wallet"]}];
                       SCOPE=CLIENTSGROUP exports a group
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

/**
 * Serves the sandbox until the signal aborts; returns the exit code (0). A bad flag or variable, or a port it cannot
 * listen on, throws a SandboxError USAGE with a one-line message.
 */
export async function runSandboxCommand(ctx: SandboxCommandContext): Promise<number> {
  const { help, settings } = readSandboxSettings(ctx.argv, ctx.env);
  if (help) {
    ctx.stdout.write(HELP);
    return 0;
  }
  const { seed, ordersOut } = settings;
  if (ordersOut !== undefined && seed === undefined) {
    throw new SandboxError(
      'USAGE',
      '--orders-out writes the orders of a seeded scenario: give --seed N (or RECON_SANDBOX_SEED) too',
    );
  }
  if (ordersOut !== undefined) await checkFolder(ordersOut);
  const writeLine = (line: string) => ctx.stderr.write(`sandbox: ${line}\n`);
  const notificationLog = createNotificationLog({ write: writeLine });
  const sandbox = createSandboxForCommand({
    accounts: settings.accounts,
    ...(settings.notifyUrl ? { notifyUrl: settings.notifyUrl } : {}),
    ...(settings.smtp ? { smtp: parseSmtp(settings.smtp) } : {}),
    ...(seed === undefined ? {} : { seed }),
    callbackFormat: settings.callbackFormat,
    dropCallbacks: settings.dropCallbacks,
    duplicateCallbacks: settings.duplicateCallbacks,
    exportLagSeconds: settings.exportLagSeconds,
    onEvent: (event) =>
      event.type === 'notification' ? notificationLog.record(event.event) : writeLine(describeEvent(event)),
  });
  // Written before the base URL is printed: whoever waits for the URL finds the file complete.
  if (ordersOut !== undefined) {
    const orders = scenarioOrders(sandbox.store, sandbox.scenario!, sandbox.clock.now());
    const written = await writeAtomically(ordersOut, formatOrdersCsv(orders)).catch(async (error: unknown) => {
      await sandbox.close();
      throw error;
    });
    const kept = orders.filter((order) => order.order !== undefined).length;
    ctx.stderr.write(`sandbox: wrote ${kept} orders of the scenario to ${written}\n`);
  }
  const baseUrl = await sandbox.listen(settings.port, settings.host).catch((error: unknown) => {
    throw new SandboxError('USAGE', `cannot listen on ${settings.host}:${settings.port}: ${oneLine(error)}`, {
      cause: error,
    });
  });
  ctx.stdout.write(`${baseUrl}\n`);
  // Without a notify URL nothing about notifications would ever show: say so once.
  const notifications = settings.notifyUrl
    ? `notifications to ${settings.notifyUrl}`
    : 'notifications recorded, not sent (no --notify-url)';
  ctx.stderr.write(`sandbox: ${describeAccounts(settings.accounts)}; ${notifications}\n`);
  if (sandbox.scenario) {
    const { seed: used, orderIds, transactionCount } = sandbox.scenario;
    ctx.stderr.write(`sandbox: seeded scenario ${used}: ${orderIds.length} orders, ${transactionCount} transactions\n`);
  }
  await abortion(ctx.signal);
  notificationLog.stopping();
  await sandbox.close();
  // The notifications abandoned by the stop fail once their retries notice it: count them before the last line.
  await sandbox.notifications.idle();
  notificationLog.end();
  return 0;
}

/** An account list the sandbox refuses (a method no account serves for the scenario, say) is a usage error. */
function createSandboxForCommand(options: SandboxOptions): Sandbox {
  try {
    return createSandbox(options);
  } catch (error) {
    if (error instanceof RangeError || error instanceof TypeError) {
      throw new SandboxError('USAGE', `invalid accounts: ${error.message}`, { cause: error });
    }
    throw error;
  }
}

async function checkFolder(file: string): Promise<void> {
  const folder = path.dirname(path.resolve(file));
  const isFolder = await stat(folder).then(
    (stats) => stats.isDirectory(),
    () => false,
  );
  if (!isFolder) throw new SandboxError('USAGE', `cannot write ${file}: folder ${folder} does not exist`);
}

/** A temporary file beside FILE, renamed over it: a reader sees the whole csv or none. Returns FILE's absolute path. */
async function writeAtomically(file: string, text: string): Promise<string> {
  const target = path.resolve(file);
  const temporary = path.join(
    path.dirname(target),
    `.${path.basename(target)}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`,
  );
  try {
    await writeFile(temporary, text, { flag: 'wx', flush: true });
    await rename(temporary, target);
    return target;
  } catch (error) {
    await rm(temporary, { force: true });
    throw new SandboxError('USAGE', `cannot write ${file}: ${(error as Error).message}`, { cause: error });
  }
}

function abortion(signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.resolve();
  return new Promise((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
}

function oneLine(error: unknown): string {
  const message =
    error instanceof Error
      ? `${error.message}${error.cause instanceof Error ? `: ${error.cause.message}` : ''}`
      : String(error);
  return message.replace(/\s*\n\s*/g, ' ');
}

/** `account shop`, or `accounts a (group g; instalment), b (wallet)`: never a secret. */
function describeAccounts(accounts: readonly SandboxAccount[]): string {
  const described = accounts.map((account) => {
    const traits = [
      ...(account.group === undefined ? [] : [`group ${account.group}`]),
      ...(account.paymentMethods === undefined ? [] : [account.paymentMethods.join(', ')]),
    ];
    return traits.length === 0 ? account.identifier : `${account.identifier} (${traits.join('; ')})`;
  });
  return `${accounts.length === 1 ? 'account' : 'accounts'} ${described.join(', ')}`;
}

function describeEvent(event: Exclude<SandboxEvent, { type: 'notification' }>): string {
  switch (event.type) {
    case 'export-failed':
      return `export delivery ${event.label} failed: ${oneLine(event.error)}`;
    case 'export-dropped':
      return `export delivery ${event.label} dropped on purpose (--drop-callbacks): never sent`;
    case 'internal-error':
      return `internal error: ${oneLine(event.error)}`;
  }
}
