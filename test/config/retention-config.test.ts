import { expect, it } from 'vitest';
import { loadConfig } from '../../src/config/config.ts';
import { expectReconError } from '../support/expect-recon-error.ts';

it('keeps delivered bytes 90 days and runs 800 days unless told otherwise', () => {
  expect(loadConfig({}).retention).toEqual({ deliveryDays: 90, runDays: 800 });
  expect(loadConfig({ RECON_DELIVERY_RETENTION_DAYS: '7', RECON_RUN_RETENTION_DAYS: ' 1100 ' }).retention).toEqual({
    deliveryDays: 7,
    runDays: 1100,
  });
});

it('refuses a retention that is not a whole number of days from 1 to 36500, in one line naming the variable', async () => {
  for (const name of ['RECON_DELIVERY_RETENTION_DAYS', 'RECON_RUN_RETENTION_DAYS']) {
    for (const value of ['0', '-3', '1.5', 'ninety', '', '36501']) {
      await expectReconError(
        async () => loadConfig({ [name]: value }),
        'CONFIG',
        `invalid environment variable ${name}: expected a whole number of days from 1 to 36500`,
      );
    }
  }
});
