import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { expect, it } from 'vitest';
import { loadConfig, requireService } from '../../src/config/config.ts';
import { expectReconError } from '../support/expect-recon-error.ts';

const URL = { RECON_SERVICE_URL: 'http://127.0.0.1:9/' };

it('reads the single pair RECON_IDENTIFIER and RECON_SECRET as one account of any payment method', () => {
  const { accounts } = requireService(loadConfig({ ...URL, RECON_IDENTIFIER: 'shop', RECON_SECRET: 's3cret' }).service);
  expect(accounts).toEqual([{ identifier: 'shop', secret: 's3cret', group: undefined, paymentMethods: undefined }]);
});

it('reads RECON_ACCOUNTS: inline secrets, secrets named by variable, groups and payment methods', () => {
  const env = {
    ...URL,
    RECON_ACCOUNTS: JSON.stringify([
      { identifier: 'shop-instalment', secret_env: 'SECRET_A', group: 'shop', payment_methods: ['instalment'] },
      { identifier: 'shop-wallet', secret: 'inline-b', group: 'shop', payment_methods: ['wallet'] },
      { identifier: 'outlet', secret_env: 'SECRET_C' },
    ]),
    SECRET_A: 'from-variable-a',
    SECRET_C: 'from-variable-c',
  };
  expect(requireService(loadConfig(env).service).accounts).toEqual([
    { identifier: 'shop-instalment', secret: 'from-variable-a', group: 'shop', paymentMethods: ['instalment'] },
    { identifier: 'shop-wallet', secret: 'inline-b', group: 'shop', paymentMethods: ['wallet'] },
    { identifier: 'outlet', secret: 'from-variable-c', group: undefined, paymentMethods: undefined },
  ]);
});

it('reads the same list from the file RECON_ACCOUNTS_FILE names', async () => {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'recon-accounts-'));
  try {
    const file = path.join(dir, 'accounts.json');
    await writeFile(
      file,
      JSON.stringify([
        { identifier: 'a', secret: 'x' },
        { identifier: 'b', secret_env: 'B' },
      ]),
    );
    const { accounts } = loadConfig({ RECON_ACCOUNTS_FILE: file, B: 'y' }).service;
    expect(accounts.map((a) => [a.identifier, a.secret])).toEqual([
      ['a', 'x'],
      ['b', 'y'],
    ]);
    await expectReconError(
      async () => loadConfig({ RECON_ACCOUNTS_FILE: path.join(dir, 'missing.json') }),
      'CONFIG',
      `RECON_ACCOUNTS_FILE (${path.join(dir, 'missing.json')}) cannot be read: ENOENT`,
    );
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

it('refuses a bad list in one line naming the entry and the field, never repeating a secret', async () => {
  const secret = 'do-not-print-me';
  const cases: [unknown, string][] = [
    [`[{"identifier": "a", "secret": "${secret}"`, 'RECON_ACCOUNTS is not valid JSON: expected an array of accounts'],
    [[], 'RECON_ACCOUNTS: the list: '],
    [[{ identifier: 'a' }], 'RECON_ACCOUNTS: account 1: expected exactly one of secret or secret_env'],
    [
      [{ identifier: 'a', secret, secret_env: 'X' }],
      'RECON_ACCOUNTS: account 1: expected exactly one of secret or secret_env',
    ],
    [[{ identifier: 'a'.repeat(33), secret }], 'RECON_ACCOUNTS: account 1 field identifier: '],
    [
      [
        { identifier: 'a', secret },
        { identifier: 'b', secret, payment_methods: ['cheque'] },
      ],
      'RECON_ACCOUNTS: account 2 field payment_methods.0: ',
    ],
    [[{ identifier: 'a', secret, colour: 'red' }], 'RECON_ACCOUNTS: account 1: '],
    [
      [
        { identifier: 'a', secret },
        { identifier: 'a', secret: 'other' },
      ],
      'RECON_ACCOUNTS: IDENTIFIER a is listed twice',
    ],
    [
      [{ identifier: 'a', secret_env: 'NOT_SET_ANYWHERE' }],
      'RECON_ACCOUNTS: account 1 (a) reads its secret from NOT_SET_ANYWHERE, which is not set',
    ],
  ];
  for (const [value, message] of cases) {
    const text = typeof value === 'string' ? value : JSON.stringify(value);
    let caught: unknown;
    try {
      loadConfig({ RECON_ACCOUNTS: text });
    } catch (error) {
      caught = error;
    }
    expect(caught, text).toMatchObject({ code: 'CONFIG' });
    const shown = (caught as Error).message;
    expect(shown.startsWith(message), `${shown} should start with ${message}`).toBe(true);
    expect(shown).not.toContain(secret);
    expect(shown).not.toContain('\n');
  }
});

it('refuses two ways of naming the accounts at once', async () => {
  const list = JSON.stringify([{ identifier: 'a', secret: 'x' }]);
  await expectReconError(
    async () => loadConfig({ RECON_ACCOUNTS: list, RECON_ACCOUNTS_FILE: '/nowhere.json' }),
    'CONFIG',
    'RECON_ACCOUNTS and RECON_ACCOUNTS_FILE are both set: set one of them',
  );
  await expectReconError(
    async () => loadConfig({ RECON_ACCOUNTS: list, RECON_IDENTIFIER: 'b' }),
    'CONFIG',
    'RECON_ACCOUNTS is set beside RECON_IDENTIFIER or RECON_SECRET: list every account in RECON_ACCOUNTS and unset the pair',
  );
});

it('says which half of the single pair is missing when a command needs the service', async () => {
  await expectReconError(
    async () => requireService(loadConfig({ ...URL, RECON_SECRET: 'x' }).service),
    'CONFIG',
    'environment variable RECON_IDENTIFIER is not set: ',
  );
  await expectReconError(
    async () => requireService(loadConfig({ ...URL, RECON_IDENTIFIER: 'a' }).service),
    'CONFIG',
    'environment variable RECON_SECRET is not set: ',
  );
});

it('lists every secret for redaction, a lone RECON_SECRET included', () => {
  expect(loadConfig({ RECON_SECRET: 'lone-secret' }).service.secrets).toEqual(['lone-secret']);
  const env = {
    RECON_ACCOUNTS: JSON.stringify([
      { identifier: 'a', secret: 'first-secret' },
      { identifier: 'b', secret_env: 'B_SECRET' },
    ]),
    B_SECRET: 'second-secret',
  };
  expect(loadConfig(env).service.secrets).toEqual(['first-secret', 'second-secret']);
});
