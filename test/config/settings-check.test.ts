import { expect, it } from 'vitest';
import { loadConfig } from '../../src/config/config.ts';
import { expectReconError } from '../support/expect-recon-error.ts';

/** Every numeric variable of src/config/config.ts: each takes plain decimal digits and nothing else. */
const NUMERIC = [
  'RECON_MAX_FILE_BYTES',
  'RECON_MAX_UNCOMPRESSED_BYTES',
  'RECON_MAX_COMPRESSION_RATIO',
  'RECON_MAX_ZIP_ENTRIES',
  'RECON_GRACE_HOURS',
  'RECON_RECONCILE_CONNECTIONS',
  'RECON_PORT',
  'RECON_ADMIN_PORT',
  'RECON_MAX_CONNECTIONS',
  'RECON_MAX_CONNECTIONS_PER_CLIENT',
  'RECON_MAX_UPLOADS',
  'RECON_MIN_UPLOAD_BYTES_PER_SECOND',
  'RECON_LOOKBACK_DAYS',
  'RECON_EXPORT_BATCH_SIZE',
  'RECON_EXPORT_TIMEOUT_SECONDS',
  'RECON_EXPORT_ATTEMPTS',
  'RECON_EXPORT_IN_FLIGHT',
  'RECON_EXPORT_LATE_SECONDS',
  'RECON_DRAIN_SECONDS',
  'RECON_JOB_HEARTBEAT_SECONDS',
  'RECON_JOB_POLL_MS',
  'RECON_ALERT_LATE_HOURS',
  'RECON_DELIVERY_RETENTION_DAYS',
  'RECON_RUN_RETENTION_DAYS',
];

it('reads every numeric setting from plain decimal digits only: 1e3, 0x10, 1.0, +5 are refused, not guessed', async () => {
  for (const variable of NUMERIC) {
    // A value it accepts, with the blanks around it an .env file may leave.
    const valid =
      variable === 'RECON_RECONCILE_CONNECTIONS' ? ' 2 ' : variable === 'RECON_JOB_POLL_MS' ? ' 500 ' : ' 20 ';
    expect(() => loadConfig({ [variable]: valid }), variable).not.toThrow();
    for (const written of ['1e3', '0x10', '0b11', '0o17', '20.0', '+20', '20_000', '1,000', 'Infinity', '', ' ']) {
      const message = await expectReconError(
        async () => loadConfig({ [variable]: written }),
        'CONFIG',
        `invalid environment variable ${variable}: expected a whole number`,
      );
      expect(message, `${variable}=${written}`).toMatch(
        /^invalid environment variable [A-Z_]+: expected a whole number/,
      );
    }
  }
  expect(loadConfig({ RECON_DELIVERY_RETENTION_DAYS: '0100' }).retention.deliveryDays).toBe(100);
  // pg-boss's own floor: a worker polls no oftener than every 500 ms.
  expect(loadConfig({}).queue.pollMs).toBe(2000);
  await expectReconError(
    async () => loadConfig({ RECON_JOB_POLL_MS: '499' }),
    'CONFIG',
    'invalid environment variable RECON_JOB_POLL_MS: expected a whole number from 500 to 60000',
  );
  // Too many digits for a number JavaScript holds exactly: refused, never rounded.
  await expectReconError(
    async () => loadConfig({ RECON_MAX_FILE_BYTES: '99999999999999999999' }),
    'CONFIG',
    'invalid environment variable RECON_MAX_FILE_BYTES: ',
  );
});

it('names every invalid variable in one message, in one line', async () => {
  const message = await expectReconError(
    async () =>
      loadConfig({
        RECON_DELIVERY_RETENTION_DAYS: '1e3',
        RECON_RUN_RETENTION_DAYS: '0x10',
        RECON_TIMEZONE: 'Mars/Olympus',
        RECON_ALERT_EMAIL: 'ops@shop.example',
      }),
    'CONFIG',
  );
  expect(message).toBe(
    '4 settings to fix: ' +
      '(1) invalid environment variable RECON_TIMEZONE: expected an IANA time zone such as Europe/Paris; ' +
      '(2) invalid environment variable RECON_DELIVERY_RETENTION_DAYS: expected a whole number of days from 1 to 36500; ' +
      '(3) invalid environment variable RECON_RUN_RETENTION_DAYS: expected a whole number of days from 1 to 36500; ' +
      '(4) RECON_ALERT_EMAIL is set but RECON_SMTP_URL is not: set RECON_SMTP_URL to the relay that sends the alerts (smtp://host:port or smtps://user:password@host)',
  );
});

it('names every missing setting a command needs, with the invalid ones, at once', async () => {
  // What recon serve needs, as the reproduction found it: three starts to learn three names.
  const message = await expectReconError(
    async () => loadConfig({ RECON_SECRET: 'a-secret' }, ['service', 'callbackBase']),
    'CONFIG',
  );
  expect(message).toMatch(/^3 settings to fix: /);
  expect(message).toContain("(1) environment variable RECON_SERVICE_URL is not set: the payment service's base URL");
  expect(message).toContain("(2) environment variable RECON_IDENTIFIER is not set: the merchant account's IDENTIFIER");
  expect(message).toContain(
    '(3) environment variable RECON_CALLBACK_BASE_URL is not set: the public URL the service posts exports to',
  );

  // Neither half of the pair: both named. An invalid variable is said once, as invalid, not also as missing.
  expect(
    await expectReconError(
      async () =>
        loadConfig(
          { RECON_SERVICE_URL: 'ftp://service', RECON_CALLBACK_BASE_URL: 'https://a-host-name-far-too-long.example/' },
          ['service', 'callbackBase'],
        ),
      'CONFIG',
    ),
  ).toMatch(
    /^4 settings to fix: \(1\) invalid environment variable RECON_SERVICE_URL: [^;]+; \(2\) environment variable RECON_IDENTIFIER is not set: [^;]+; \(3\) environment variable RECON_SECRET is not set: [^;]+; \(4\) invalid RECON_CALLBACK_BASE_URL: https:\/\/a-host-name-far-too-long\.example\/ is 41 characters/,
  );

  // recon sync-orders: both of its variables.
  expect(await expectReconError(async () => loadConfig({}, ['ordersSource']), 'CONFIG')).toMatch(
    /^2 settings to fix: \(1\) environment variable RECON_ORDERS_DATABASE_URL is not set: .*; \(2\) environment variable RECON_ORDERS_QUERY is not set: /,
  );
  // Nothing needed, nothing missing: a command that does not call the service does not ask for it.
  expect(() => loadConfig({})).not.toThrow();
});
