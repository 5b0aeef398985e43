import { expect, it } from 'vitest';
import { loadConfig } from '../../src/config/config.ts';
import { expectReconError } from '../support/expect-recon-error.ts';

it('reads the nightly settings with their defaults', () => {
  expect(loadConfig({}).nightly).toEqual({
    schedule: '30 2 * * *',
    scheduleTimezone: 'Europe/Paris',
    lookbackDays: 30,
    exportBatchSize: 200,
    exportCompression: 'gzip',
    exportTimeoutSeconds: 3600,
    exportAttempts: 3,
    exportInFlight: 32,
    exportLateSeconds: 600,
  });
  expect(loadConfig({}).serve).toEqual({
    port: 8090,
    host: '127.0.0.1',
    maxConnections: 256,
    maxConnectionsPerClient: 64,
    maxUploads: 8,
    minUploadBytesPerSecond: 1024,
    slowUploadWindowMs: 30_000,
    headersTimeoutMs: 20_000,
    callbackBaseUrl: undefined,
  });
});

it('takes RECON_EXPORT_COMPRESSION in any letter case, as the service does, and keeps it lower-case', async () => {
  for (const [given, kept] of [
    ['GZIP', 'gzip'],
    ['Zip', 'zip'],
    [' bzip ', 'bzip'],
  ] as const) {
    expect(loadConfig({ RECON_EXPORT_COMPRESSION: given }).nightly.exportCompression).toBe(kept);
  }
  await expectReconError(
    async () => loadConfig({ RECON_EXPORT_COMPRESSION: 'rar' }),
    'CONFIG',
    'invalid environment variable RECON_EXPORT_COMPRESSION: ',
  );
});

it('refuses a batch size, attempt count or timeout that is not a positive whole number, naming the variable', async () => {
  for (const name of [
    'RECON_EXPORT_BATCH_SIZE',
    'RECON_EXPORT_ATTEMPTS',
    'RECON_EXPORT_IN_FLIGHT',
    'RECON_EXPORT_TIMEOUT_SECONDS',
    'RECON_LOOKBACK_DAYS',
  ]) {
    await expectReconError(async () => loadConfig({ [name]: '0' }), 'CONFIG', `invalid environment variable ${name}: `);
  }
});

it('refuses a schedule zone that is not an IANA zone, naming the variable', async () => {
  await expectReconError(
    async () => loadConfig({ RECON_SCHEDULE_TIMEZONE: 'Mars/Olympus' }),
    'CONFIG',
    'invalid environment variable RECON_SCHEDULE_TIMEZONE: expected an IANA time zone',
  );
  expect(loadConfig({ RECON_SCHEDULE_TIMEZONE: 'America/New_York' }).nightly.scheduleTimezone).toBe('America/New_York');
});

it('refuses an ingest zone that is not an IANA zone, naming the variable', async () => {
  await expectReconError(
    async () => loadConfig({ RECON_TIMEZONE: 'Nowhere/Land' }),
    'CONFIG',
    'invalid environment variable RECON_TIMEZONE: expected an IANA time zone',
  );
  expect(loadConfig({ RECON_TIMEZONE: 'Asia/Tokyo' }).timezone).toBe('Asia/Tokyo');
  expect(loadConfig({}).timezone).toBe('UTC');
});
