import { expect, it } from 'vitest';
import { loadConfig } from '../../src/config/config.ts';
import { expectReconError } from '../support/expect-recon-error.ts';

it('names the reader and accountant roles recon_reader and recon_accountant unless told otherwise', () => {
  expect(loadConfig({}).reportingRoles).toEqual({ reader: 'recon_reader', accountant: 'recon_accountant' });
  expect(
    loadConfig({ RECON_READER_ROLE: ' shop_a_reader ', RECON_ACCOUNTANT_ROLE: '_shop_a_accountant2' }).reportingRoles,
  ).toEqual({ reader: 'shop_a_reader', accountant: '_shop_a_accountant2' });
});

it('refuses a role name that is not a plain identifier, in one line naming the variable', async () => {
  for (const name of ['RECON_READER_ROLE', 'RECON_ACCOUNTANT_ROLE']) {
    for (const value of [
      '',
      'Readers',
      '1reader',
      'reader-a',
      'reader a',
      'x"; DROP ROLE y; --',
      'pg_monitor',
      'r'.repeat(64),
    ]) {
      await expectReconError(
        async () => loadConfig({ [name]: value }),
        'CONFIG',
        `invalid environment variable ${name}: expected a role name: lower-case letters, digits and _`,
      );
    }
  }
});

it('refuses one role for both: the reader would be able to write', async () => {
  await expectReconError(
    async () => loadConfig({ RECON_READER_ROLE: 'books', RECON_ACCOUNTANT_ROLE: 'books' }),
    'CONFIG',
    'RECON_READER_ROLE and RECON_ACCOUNTANT_ROLE are both books',
  );
});
