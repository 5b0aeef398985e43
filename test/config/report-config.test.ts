import { expect, it } from 'vitest';
import { loadConfig } from '../../src/config/config.ts';
import { expectReconError } from '../support/expect-recon-error.ts';

it('takes the days of reports in UTC unless RECON_REPORT_TIMEZONE names a zone, written as Intl writes it', () => {
  expect(loadConfig({}).reportTimezone).toBe('UTC');
  expect(loadConfig({ RECON_REPORT_TIMEZONE: 'europe/paris' }).reportTimezone).toBe('Europe/Paris');
});

it('refuses an unknown zone and an offset, in one line naming the variable', async () => {
  await expectReconError(
    async () => loadConfig({ RECON_REPORT_TIMEZONE: 'Mars/Olympus' }),
    'CONFIG',
    'invalid environment variable RECON_REPORT_TIMEZONE: expected an IANA time zone',
  );
  await expectReconError(
    async () => loadConfig({ RECON_REPORT_TIMEZONE: '+05:30' }),
    'CONFIG',
    'invalid environment variable RECON_REPORT_TIMEZONE: expected an IANA time zone name such as Europe/Paris, not an offset',
  );
});
