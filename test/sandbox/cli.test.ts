import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { encodeRequest, type Params } from '../../src/protocol/form-encoding.ts';
import { signParams } from '../../src/protocol/hash.ts';
import { startNotificationReceiver } from './support/notification-receiver.ts';
import { walletParams } from './support/sandbox-harness.ts';

const MAIN = path.resolve(import.meta.dirname, '../../src/cli/main.ts');

interface Running {
  readonly child: ChildProcess;
  readonly baseUrl: string;
  stderr(): string;
}

/** `recon sandbox ...` as a subprocess; resolves with the base URL it prints first. */
async function startCli(args: string[], env: Record<string, string> = {}): Promise<Running> {
  const child = spawn(process.execPath, [MAIN, 'sandbox', ...args], {
    env: { PATH: process.env.PATH ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  let stdout = '';
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const baseUrl = await new Promise<string>((resolve, reject) => {
    child.stdout!.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
      if (stdout.includes('\n')) resolve(stdout.split('\n')[0]!);
    });
    child.once('exit', (code) => reject(new Error(`recon sandbox exited ${code}: ${stderr}`)));
  });
  return { child, baseUrl, stderr: () => stderr };
}

async function run(args: string[], env: Record<string, string> = {}): Promise<{ code: number | null; stderr: string }> {
  const child = spawn(process.execPath, [MAIN, 'sandbox', ...args], { env: { PATH: process.env.PATH ?? '', ...env } });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const [code] = (await once(child, 'exit')) as [number | null];
  return { code, stderr };
}

async function post(baseUrl: string, method: string, params: Params, secret: string): Promise<Record<string, string>> {
  const body = encodeRequest(method, signParams(secret, { OPERATIONTYPE: method, ...params }));
  const response = await fetch(`${baseUrl}/front/service/rest/process`, { method: 'POST', body });
  return (await response.json()) as Record<string, string>;
}

const children: ChildProcess[] = [];
afterEach(() => {
  for (const child of children.splice(0)) if (child.exitCode === null) child.kill('SIGKILL');
});

describe('recon sandbox (CLI)', () => {
  it('prints the base URL, serves with the flags\' account, notifies the flag\'s URL, and stops cleanly on SIGTERM', async () => {
    const receiver = await startNotificationReceiver();
    try {
      const cli = await startCli(['--port', '0', '--identifier', 'CLI-SHOP', '--secret', 'cli-secret', '--notify-url', receiver.url]);
      expect(cli.baseUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      const answer = await post(cli.baseUrl, 'payment', walletParams({ IDENTIFIER: 'CLI-SHOP' }), 'cli-secret');
      expect(answer).toMatchObject({ EXECCODE: '0002' });
      const action = /action="([^"]+)"/.exec(Buffer.from(answer['REDIRECTHTML']!, 'base64').toString())![1]!;
      expect(action.startsWith(cli.baseUrl)).toBe(true);
      await fetch(action, { method: 'POST', body: new URLSearchParams({ outcome: 'validated' }) });
      while (receiver.accepted().length === 0) await new Promise((resolve) => setTimeout(resolve, 20));
      expect(new URLSearchParams(receiver.accepted()[0]).get('TRANSACTIONID')).toBe(answer['TRANSACTIONID']);
      const clock = await (await fetch(`${cli.baseUrl}/sandbox/clock`)).text();
      expect(clock).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);

      cli.child.kill('SIGTERM');
      const [code] = (await once(cli.child, 'exit')) as [number | null];
      expect(code).toBe(0);
      expect(cli.stderr()).toContain('delivered');
    } finally {
      await receiver.close();
    }
  });

  it('reads RECON_SANDBOX_* when no flag is given, and a flag wins over its variable', async () => {
    const env = { RECON_SANDBOX_PORT: '0', RECON_SANDBOX_IDENTIFIER: 'ENV-SHOP', RECON_SANDBOX_SECRET: 'env-secret' };
    const fromEnv = await startCli([], env);
    expect(await post(fromEnv.baseUrl, 'payment', walletParams({ IDENTIFIER: 'ENV-SHOP' }), 'env-secret')).toMatchObject({ EXECCODE: '0002' });
    fromEnv.child.kill('SIGINT');
    expect((await once(fromEnv.child, 'exit'))[0]).toBe(0);

    const flagWins = await startCli(['--secret', 'flag-secret'], env);
    expect(await post(flagWins.baseUrl, 'payment', walletParams({ IDENTIFIER: 'ENV-SHOP' }), 'flag-secret')).toMatchObject({ EXECCODE: '0002' });
    expect(await post(flagWins.baseUrl, 'payment', walletParams({ IDENTIFIER: 'ENV-SHOP' }), 'env-secret')).toMatchObject({ EXECCODE: '1003' });
  });

  it('starts with a seeded scenario on --seed', async () => {
    const cli = await startCli(['--port', '0', '--identifier', 'SEEDED', '--secret', 's', '--seed', '7']);
    await new Promise<void>((resolve) => {
      const check = () => (cli.stderr().includes('seeded scenario 7') ? resolve() : setTimeout(check, 10));
      check();
    });
    expect(cli.stderr()).toMatch(/seeded scenario 7: 40 orders, \d+ transactions/);
  });

  it.each([
    [['--port', 'eighty'], /invalid --port/],
    [['--identifier', 'x'.repeat(33)], /invalid --identifier/],
    [['--notify-url', 'not a url'], /invalid --notify-url/],
    [['--smtp', 'localhost'], /invalid --smtp/],
    [['--colour'], /Unknown option/],
  ])('refuses %j with exit 1 and a one-line message', async (args, message) => {
    const { code, stderr } = await run(args);
    expect(code).toBe(1);
    expect(stderr).toMatch(message);
    expect(stderr.trim().split('\n')).toHaveLength(1);
  });

  it('refuses a bad RECON_SANDBOX_* variable naming it', async () => {
    const { code, stderr } = await run([], { RECON_SANDBOX_PORT: '70000' });
    expect(code).toBe(1);
    expect(stderr).toContain('RECON_SANDBOX_PORT');
  });
});
