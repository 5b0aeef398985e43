import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { main } from '../src/cli/main.ts';
import { createSandbox } from '../src/sandbox.ts';
import { formatOrdersCsv } from '../src/scenario/orders-csv.ts';
import { scenarioOrders } from '../src/scenario/scenario-orders.ts';
import { createArrivals } from './support/arrivals.ts';
import { startMailReceiver } from './export/mail-receiver.ts';
import { startUploadReceiver } from './export/upload-receiver.ts';
import { startNotificationReceiver } from './support/notification-receiver.ts';
import { answerCardholderPage, cardholderPageUrl, postSigned, walletParams } from './support/sandbox-harness.ts';

/** The package's own command, `recon-sandbox`, which `recon sandbox` runs too. */
const MAIN = path.resolve(import.meta.dirname, '../src/cli/main.ts');

// 127.0.0.2 is loopback on Linux; where it is not, the RECON_SANDBOX_HOST case listens on 127.0.0.1.
const OTHER_LOOPBACK = await new Promise<string>((resolve) => {
  const probe = createServer().once('error', () => resolve('127.0.0.1'));
  probe.listen(0, '127.0.0.2', () => probe.close(() => resolve('127.0.0.2')));
});

interface Running {
  readonly child: ChildProcess;
  readonly baseUrl: string;
  stderr(): string;
  /** Resolves once stderr matches `pattern`. */
  stderrMatching(pattern: RegExp): Promise<void>;
}

/** `recon-sandbox ...` as a subprocess; resolves with the base URL it prints first. */
async function startCli(args: string[], env: Record<string, string> = {}): Promise<Running> {
  const child = spawn(process.execPath, [MAIN, ...args], {
    env: { PATH: process.env.PATH ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  let stdout = '';
  let stderr = '';
  const stderrArrivals = createArrivals();
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
    stderrArrivals.notify();
  });
  const baseUrl = await new Promise<string>((resolve, reject) => {
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
      if (stdout.includes('\n')) resolve(stdout.split('\n')[0]!);
    });
    child.once('exit', (code) => reject(new Error(`recon-sandbox exited ${code}: ${stderr}`)));
  });
  return {
    child,
    baseUrl,
    stderr: () => stderr,
    stderrMatching: (pattern) => stderrArrivals.until(() => pattern.test(stderr)),
  };
}

async function run(args: string[], env: Record<string, string> = {}): Promise<{ code: number | null; stderr: string }> {
  const child = spawn(process.execPath, [MAIN, ...args], { env: { PATH: process.env.PATH ?? '', ...env } });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const [code] = (await once(child, 'exit')) as [number | null];
  return { code, stderr };
}

/**
 * `recon-sandbox ...` run by its main in this process, with the environment run gives the subprocess: for the
 * variants of a refusal, which run checks once as a process.
 */
async function runInProcess(
  args: string[],
  env: Record<string, string> = {},
): Promise<{ code: number | null; stderr: string }> {
  let stderr = '';
  const code = await main({
    argv: args,
    env: { PATH: process.env.PATH ?? '', ...env },
    stdout: new Writable({ write: (_chunk, _encoding, done) => done() }),
    stderr: new Writable({
      write(chunk: Buffer, _encoding, done) {
        stderr += chunk.toString();
        done();
      },
    }),
    signal: new AbortController().signal,
  });
  return { code, stderr };
}

async function stop(running: Running, signal: NodeJS.Signals): Promise<number | null> {
  running.child.kill(signal);
  const [code] = (await once(running.child, 'exit')) as [number | null];
  return code;
}

const children: ChildProcess[] = [];
afterEach(() => {
  for (const child of children.splice(0)) if (child.exitCode === null) child.kill('SIGKILL');
});

describe('recon-sandbox (CLI)', () => {
  it("prints the base URL, serves with the flags' account, notifies the flag's URL, and stops cleanly on SIGTERM", async () => {
    const receiver = await startNotificationReceiver();
    try {
      const cli = await startCli([
        '--port',
        '0',
        '--identifier',
        'CLI-SHOP',
        '--secret',
        'cli-secret',
        '--notify-url',
        receiver.url,
      ]);
      expect(cli.baseUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      const answer = await postSigned(cli.baseUrl, 'payment', walletParams({ IDENTIFIER: 'CLI-SHOP' }), 'cli-secret');
      expect(answer).toMatchObject({ EXECCODE: '0002' });
      const action = cardholderPageUrl(answer);
      expect(action.startsWith(cli.baseUrl)).toBe(true);
      await answerCardholderPage(action, 'validated');
      await receiver.acceptedCount(1);
      expect(new URLSearchParams(receiver.accepted()[0]).get('TRANSACTIONID')).toBe(answer['TRANSACTIONID']);
      const clock = await (await fetch(`${cli.baseUrl}/sandbox/clock`)).text();
      expect(clock).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);

      expect(await stop(cli, 'SIGTERM')).toBe(0);
      expect(cli.stderr()).toContain('delivered');
    } finally {
      await receiver.close();
    }
  });

  it('reads every RECON_SANDBOX_* variable when no flag is given: host, port, account, notify URL, SMTP server, seed', async () => {
    const receiver = await startNotificationReceiver();
    const mail = await startMailReceiver();
    try {
      const cli = await startCli([], {
        RECON_SANDBOX_HOST: OTHER_LOOPBACK,
        RECON_SANDBOX_PORT: '0',
        RECON_SANDBOX_IDENTIFIER: 'ENV-SHOP',
        RECON_SANDBOX_SECRET: 'env-secret',
        RECON_SANDBOX_NOTIFY_URL: receiver.url,
        RECON_SANDBOX_SMTP: `${mail.host}:${mail.port}`,
        RECON_SANDBOX_SEED: '7',
      });
      expect(cli.baseUrl.startsWith(`http://${OTHER_LOOPBACK}:`)).toBe(true);
      await cli.stderrMatching(/seeded scenario 7: 40 orders/);
      expect(cli.stderr()).toContain(`sandbox: account ENV-SHOP; notifications to ${receiver.url}`);

      const exported = await postSigned(
        cli.baseUrl,
        'getTransactions',
        {
          IDENTIFIER: 'ENV-SHOP',
          VERSION: '3.0',
          ORDERID: 'ORD-7-0001',
          MAILTO: 'ops@example.org',
          COMPRESSION: 'gzip',
        },
        'env-secret',
      );
      expect(exported).toMatchObject({ EXECCODE: '0000' });
      await mail.messageCount(1);
      expect(mail.messages[0]!.to).toEqual(['ops@example.org']);
      expect(mail.messages[0]!.mail.attachments[0]?.filename).toMatch(/\.csv\.gz$/);

      // The seeded scenario's operations are notified too, as many as the same seed notifies in process.
      const inProcess = createSandbox({ identifier: 'ENV-SHOP', secret: 'env-secret', seed: 7 });
      const seededNotifications = inProcess.notifications.deliveries().length;
      await inProcess.close();
      expect(seededNotifications).toBeGreaterThan(40);
      const payment = await postSigned(cli.baseUrl, 'payment', walletParams({ IDENTIFIER: 'ENV-SHOP' }), 'env-secret');
      await answerCardholderPage(cardholderPageUrl(payment), 'validated');
      await receiver.acceptedCount(seededNotifications + 1);
      const notified = receiver.accepted().map((body) => new URLSearchParams(body));
      expect(notified.filter((fields) => fields.get('TRANSACTIONID') === payment['TRANSACTIONID'])).toHaveLength(1);
      const others = notified.filter((fields) => fields.get('TRANSACTIONID') !== payment['TRANSACTIONID']);
      expect(others.filter((fields) => !fields.get('ORDERID')?.startsWith('ORD-7-'))).toEqual([]);
      expect(await stop(cli, 'SIGINT')).toBe(0);
    } finally {
      await receiver.close();
      await mail.close();
    }
  });

  it('started before its merchant listens, it writes a summary of failed attempts at most every 5 s, not a line per retry', async () => {
    const refusing = await startNotificationReceiver({ refuseFirst: Number.MAX_SAFE_INTEGER });
    try {
      const started = Date.now();
      const cli = await startCli(['--port', '0', '--seed', '7', '--notify-url', refusing.url]);
      await refusing.receivedCount(150);
      expect(await stop(cli, 'SIGTERM')).toBe(0);
      const elapsedMs = Date.now() - started;
      const lines = cli.stderr().trim().split('\n');
      const summaries = lines.filter((line) => line.startsWith('sandbox: notifications'));
      // One at once, one per 5 s after it, one at the stop.
      expect(summaries.length).toBeLessThanOrEqual(2 + Math.floor(elapsedMs / 5000));
      expect(lines.length).toBeLessThanOrEqual(summaries.length + 3);
      const failed = summaries.map((line) => Number(/(\d+) attempts? failed/.exec(line)?.[1] ?? 0));
      const counted = failed.reduce((sum, count) => sum + count, 0);
      // Attempts answered while the stop aborted them count with the abandoned notifications, not as failed attempts.
      expect(counted).toBeLessThanOrEqual(refusing.received.length);
      expect(counted).toBeGreaterThanOrEqual(150 - 8);
      expect(summaries[0]).toMatch(
        /^sandbox: notifications: \d+ attempts? failed \(last: HTTP 500 answered "temporarily broken"/,
      );
      const inProcess = createSandbox({ identifier: 'sandbox-merchant', secret: 'sandbox-secret', seed: 7 });
      const seededNotifications = inProcess.notifications.deliveries().length;
      await inProcess.close();
      expect(lines.at(-1)).toBe(`sandbox: ${seededNotifications} notifications not delivered: the sandbox stopped`);
    } finally {
      await refusing.close();
    }
  });

  it('lets a flag win over its variable', async () => {
    const env = {
      RECON_SANDBOX_PORT: '0',
      RECON_SANDBOX_IDENTIFIER: 'ENV-SHOP',
      RECON_SANDBOX_SECRET: 'env-secret',
      RECON_SANDBOX_SEED: '7',
    };
    const cli = await startCli(['--secret', 'flag-secret', '--seed', '3'], env);
    await cli.stderrMatching(/seeded scenario 3: /);
    const payment = () => walletParams({ IDENTIFIER: 'ENV-SHOP' });
    expect(await postSigned(cli.baseUrl, 'payment', payment(), 'flag-secret')).toMatchObject({ EXECCODE: '0002' });
    expect(await postSigned(cli.baseUrl, 'payment', payment(), 'env-secret')).toMatchObject({ EXECCODE: '1003' });
  });

  it.each([
    [
      'flags',
      ['--callback-format', 'raw', '--drop-callbacks', '1', '--duplicate-callbacks'],
      { RECON_SANDBOX_CALLBACK_FORMAT: 'multipart' },
    ],
    [
      'variables',
      [],
      {
        RECON_SANDBOX_CALLBACK_FORMAT: 'raw',
        RECON_SANDBOX_DROP_CALLBACKS: '1',
        RECON_SANDBOX_DUPLICATE_CALLBACKS: 'true',
      },
    ],
  ])(
    'takes the callback switches from %s: raw bodies, the first delivery lost, every other sent twice',
    async (_from, args, env) => {
      const uploads = await startUploadReceiver();
      try {
        const cli = await startCli(
          ['--port', '0', '--identifier', 'CB-SHOP', '--secret', 'cb', '--seed', '7', ...args],
          env,
        );
        const exportTo = (path: string) =>
          postSigned(
            cli.baseUrl,
            'getTransactions',
            {
              IDENTIFIER: 'CB-SHOP',
              VERSION: '3.0',
              ORDERID: 'ORD-7-0001',
              COMPRESSION: 'gzip',
              CALLBACKURL: `${uploads.url}${path}`,
            },
            'cb',
          );
        expect(await exportTo('/lost')).toMatchObject({ EXECCODE: '0000' });
        await cli.stderrMatching(/export delivery to \S+\/lost dropped on purpose/);
        expect(await exportTo('/sent')).toMatchObject({ EXECCODE: '0000' });
        await uploads.receivedCount(2);
        expect(uploads.received.map((upload) => [upload.url, upload.contentType])).toEqual([
          ['/sent', 'application/gzip'],
          ['/sent', 'application/gzip'],
        ]);
        expect(await stop(cli, 'SIGTERM')).toBe(0);
      } finally {
        await uploads.close();
      }
    },
  );

  it("writes the seeded scenario's orders csv on --orders-out before it prints its URL, flag or variable", async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'recon-sandbox-orders-'));
    try {
      // The csv's values are the scenario's, whatever the clock; only created_at follows the clock's reading.
      const inProcess = createSandbox({ identifier: 'ORDERS', secret: 's', seed: 7 });
      const withoutCreatedAt = (csv: string) => csv.split('\n').map((line) => line.split(';').slice(0, -1).join(';'));
      const expected = withoutCreatedAt(
        formatOrdersCsv(scenarioOrders(inProcess.store, inProcess.scenario!, inProcess.clock.now())),
      );
      await inProcess.close();
      const written = expected.length - 2;

      const byFlag = path.join(dir, 'flag.csv');
      const cli = await startCli(
        ['--port', '0', '--identifier', 'ORDERS', '--secret', 's', '--seed', '7', '--orders-out', byFlag],
        {
          RECON_SANDBOX_ORDERS_OUT: path.join(dir, 'ignored.csv'),
        },
      );
      expect(withoutCreatedAt(await readFile(byFlag, 'utf8'))).toEqual(expected);
      await cli.stderrMatching(new RegExp(`wrote ${written} orders of the scenario to ${byFlag}`));
      expect(await stop(cli, 'SIGTERM')).toBe(0);

      const byVariable = path.join(dir, 'variable.csv');
      await startCli(['--port', '0', '--identifier', 'ORDERS', '--secret', 's'], {
        RECON_SANDBOX_SEED: '7',
        RECON_SANDBOX_ORDERS_OUT: byVariable,
      });
      expect(withoutCreatedAt(await readFile(byVariable, 'utf8'))).toEqual(expected);
      await expect(readFile(path.join(dir, 'ignored.csv'))).rejects.toThrow(/ENOENT/);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('refuses --orders-out without a seeded scenario, and into a folder that does not exist', async () => {
    const unseeded = await run(['--orders-out', 'orders.csv']);
    expect(unseeded.code).toBe(1);
    expect(unseeded.stderr).toMatch(/--orders-out writes the orders of a seeded scenario: give --seed N/);
    const nowhere = await run(['--seed', '1', '--orders-out', '/nonexistent-recon-folder/orders.csv']);
    expect(nowhere.code).not.toBe(0);
    expect(nowhere.stderr).toMatch(
      /cannot write \/nonexistent-recon-folder\/orders\.csv: folder \/nonexistent-recon-folder does not exist/,
    );
    expect(nowhere.stderr.trim().split('\n')).toHaveLength(1);
  });

  it.each([
    ['--export-lag-seconds', ['--export-lag-seconds', '600'], {}],
    ['RECON_SANDBOX_EXPORT_LAG_SECONDS', [], { RECON_SANDBOX_EXPORT_LAG_SECONDS: '600' }],
  ])('leaves a payment younger than %s out of its exports', async (_from, args, env) => {
    const cli = await startCli(['--port', '0', '--identifier', 'LAG', '--secret', 'lag', ...args], env);
    const payment = walletParams({ IDENTIFIER: 'LAG' });
    expect(await postSigned(cli.baseUrl, 'payment', payment, 'lag')).toMatchObject({ EXECCODE: '0002' });
    const exported = await postSigned(
      cli.baseUrl,
      'getTransactions',
      { IDENTIFIER: 'LAG', VERSION: '3.0', ORDERID: payment['ORDERID']! },
      'lag',
    );
    expect(exported).toMatchObject({ EXECCODE: '0000', DATA: [] });
    expect(await stop(cli, 'SIGTERM')).toBe(0);
  });

  it('starts with a seeded scenario on --seed', async () => {
    const cli = await startCli(['--port', '0', '--identifier', 'SEEDED', '--secret', 's', '--seed', '7']);
    await cli.stderrMatching(/seeded scenario 7: 40 orders, \d+ transactions/);
    expect(cli.stderr()).toContain('sandbox: account SEEDED; notifications recorded, not sent (no --notify-url)');
  });

  it('serves the accounts of --accounts, or of RECON_SANDBOX_ACCOUNTS with secrets read from variables', async () => {
    const accounts = JSON.stringify([
      { identifier: 'CLI-INSTAL', secret_env: 'INSTAL_KEY', group: 'cli', payment_methods: ['instalment'] },
      { identifier: 'CLI-WALLET', secret: 'wallet-key', group: 'cli' },
    ]);
    const byFlag = await startCli(['--port', '0', '--accounts', accounts, '--seed', '5'], { INSTAL_KEY: 'instal-key' });
    await byFlag.stderrMatching(/seeded scenario 5/);
    expect(byFlag.stderr()).toContain('sandbox: accounts CLI-INSTAL (group cli; instalment), CLI-WALLET (group cli);');
    expect(byFlag.stderr()).not.toContain('instal-key');
    const wallet = await postSigned(
      byFlag.baseUrl,
      'payment',
      walletParams({ IDENTIFIER: 'CLI-WALLET' }),
      'wallet-key',
    );
    expect(wallet).toMatchObject({ EXECCODE: '0002' });
    const refused = await postSigned(
      byFlag.baseUrl,
      'payment',
      walletParams({ IDENTIFIER: 'CLI-INSTAL' }),
      'instal-key',
    );
    expect(refused).toMatchObject({ EXECCODE: '3001' });
    expect(await stop(byFlag, 'SIGTERM')).toBe(0);

    const byVariable = await startCli(['--port', '0'], { RECON_SANDBOX_ACCOUNTS: accounts, INSTAL_KEY: 'instal-key' });
    await byVariable.stderrMatching(/sandbox: accounts CLI-INSTAL \(group cli; instalment\), CLI-WALLET/);
    expect(await stop(byVariable, 'SIGTERM')).toBe(0);
  });

  it.each([
    [['--accounts', '[{"identifier":"A","secret":"s"}]', '--secret', 'x'], /drop --identifier and --secret/],
    [['--accounts', '{not json: "hidden-secret"}'], /invalid --accounts: not valid JSON/],
    [['--accounts', '[{"identifier":"A"}]'], /account 1: expected exactly one of secret or secret_env/],
    [['--accounts', '[{"identifier":"A","secret_env":"UNSET_KEY"}]'], /reads its secret from UNSET_KEY/],
    [['--accounts', '[{"identifier":"A","secret":"s"},{"identifier":"A","secret":"t"}]'], /A is listed twice/],
    [
      ['--accounts', '[{"identifier":"A","secret":"s","payment_methods":["instalment"]}]', '--seed', '1'],
      /no account serves wallet/,
    ],
  ])('refuses accounts %j with exit 1, never quoting a secret', async (args, message) => {
    const { code, stderr } = await runInProcess(args);
    expect(code).toBe(1);
    expect(stderr).toMatch(message);
    expect(stderr).not.toContain('hidden-secret');
    expect(stderr.trim().split('\n')).toHaveLength(1);
  });

  it('refuses RECON_SANDBOX_ACCOUNTS beside RECON_SANDBOX_SECRET', async () => {
    const { code, stderr } = await runInProcess([], {
      RECON_SANDBOX_ACCOUNTS: '[{"identifier":"A","secret":"s"}]',
      RECON_SANDBOX_SECRET: 'x',
    });
    expect(code).toBe(1);
    expect(stderr).toContain('unset RECON_SANDBOX_IDENTIFIER and RECON_SANDBOX_SECRET');
  });

  it.each([
    [['--port', 'eighty'], /invalid --port/],
    [['--identifier', 'x'.repeat(33)], /invalid --identifier/],
    [['--notify-url', 'not a url'], /invalid --notify-url/],
    [['--smtp', 'localhost'], /invalid --smtp/],
    [['--smtp', 'localhost:70000'], /port must be 1-65535/],
    [['--seed=-1'], /invalid --seed/],
    [['--callback-format', 'json'], /invalid --callback-format/],
    [['--drop-callbacks=-2'], /invalid --drop-callbacks/],
    [['--drop-callbacks', '1.5'], /invalid --drop-callbacks/],
    [['--export-lag-seconds', 'soon'], /invalid --export-lag-seconds/],
    // Decimal digits only: JavaScript's Number would read these as 1000, 16 and 7.
    [['--port', '1e3'], /invalid --port "1e3": expected a whole number from 0 to 65535, in decimal digits/],
    [['--seed', '0x10'], /invalid --seed/],
    [['--drop-callbacks', '7.0'], /invalid --drop-callbacks/],
    [['--colour'], /Unknown option/],
  ])('refuses %j with exit 1 and a one-line message', async (args, message) => {
    const { code, stderr } = await runInProcess(args);
    expect(code).toBe(1);
    expect(stderr).toMatch(message);
    expect(stderr.trim().split('\n')).toHaveLength(1);
  });

  it.each([
    ['RECON_SANDBOX_PORT', '70000'],
    ['RECON_SANDBOX_SEED', 'seven'],
    ['RECON_SANDBOX_CALLBACK_FORMAT', 'form'],
    ['RECON_SANDBOX_DROP_CALLBACKS', 'some'],
    ['RECON_SANDBOX_DUPLICATE_CALLBACKS', 'twice'],
    ['RECON_SANDBOX_EXPORT_LAG_SECONDS', '-5'],
    ['RECON_SANDBOX_EXPORT_LAG_SECONDS', '0x10'],
    ['RECON_SANDBOX_SEED', '1e3'],
  ])('refuses a bad %s naming it', async (variable, value) => {
    const { code, stderr } = await runInProcess([], { [variable]: value });
    expect(code).toBe(1);
    expect(stderr).toContain(variable);
  });

  it('names every bad variable in the one line of one start', async () => {
    const { code, stderr } = await runInProcess([], { RECON_SANDBOX_PORT: '0x10', RECON_SANDBOX_SEED: '1e3' });
    expect(code).toBe(1);
    expect(stderr.trim().split('\n')).toHaveLength(1);
    expect(stderr).toMatch(
      /2 settings to fix: \(1\) invalid environment variable RECON_SANDBOX_PORT: expected a whole number from 0 to 65535, in decimal digits; \(2\) invalid environment variable RECON_SANDBOX_SEED: /,
    );
  });
});
