import { expect, it } from 'vitest';
import { loadConfig } from '../../src/config/config.ts';
import { expectReconError } from '../support/expect-recon-error.ts';

it('keeps delivered bytes 90 days, those of failed deliveries 30 days and runs 800 days unless told otherwise', () => {
  expect(loadConfig({}).retention).toEqual({ deliveryDays: 90, failedDeliveryDays: 30, runDays: 800 });
  expect(
    loadConfig({
      RECON_DELIVERY_RETENTION_DAYS: '7',
      RECON_FAILED_DELIVERY_RETENTION_DAYS: '014',
      RECON_RUN_RETENTION_DAYS: ' 1100 ',
    }).retention,
  ).toEqual({ deliveryDays: 7, failedDeliveryDays: 14, runDays: 1100 });
});

it('refuses a retention that is not a whole number of days from 1 to 36500, in one line naming the variable', async () => {
  for (const name of [
    'RECON_DELIVERY_RETENTION_DAYS',
    'RECON_FAILED_DELIVERY_RETENTION_DAYS',
    'RECON_RUN_RETENTION_DAYS',
  ]) {
    // Written in decimal digits only: an exponent, a hexadecimal or a sign is a typo, not a number of days.
    for (const value of ['0', '-3', '1.5', 'ninety', '', '36501', '1e3', '0x10', '+5', '3 0', '٣٠']) {
      await expectReconError(
        async () => loadConfig({ [name]: value }),
        'CONFIG',
        `invalid environment variable ${name}: expected a whole number of days from 1 to 36500`,
      );
    }
  }
});
