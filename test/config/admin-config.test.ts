import { expect, it } from 'vitest';
import { loadConfig } from '../../src/config/config.ts';
import { expectReconError } from '../support/expect-recon-error.ts';

it('puts the admin listener on loopback port 8091 by default', () => {
  expect(loadConfig({}).admin).toEqual({ port: 8091, host: '127.0.0.1' });
  expect(loadConfig({ RECON_ADMIN_PORT: '0', RECON_ADMIN_HOST: '0.0.0.0' }).admin).toEqual({
    port: 0,
    host: '0.0.0.0',
  });
});

it('refuses an admin port out of range or an empty host, naming the variable', async () => {
  for (const [name, value] of [
    ['RECON_ADMIN_PORT', '65536'],
    ['RECON_ADMIN_PORT', 'metrics'],
    ['RECON_ADMIN_HOST', ''],
  ] as const) {
    await expectReconError(
      async () => loadConfig({ [name]: value }),
      'CONFIG',
      `invalid environment variable ${name}: `,
    );
  }
});
