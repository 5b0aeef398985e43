import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/config.ts';
import { expectReconError } from '../support/expect-recon-error.ts';

describe('the alert settings', () => {
  it('default to no channel and 6 hours of lateness', () => {
    expect(loadConfig({}).alerts).toEqual({ webhookUrl: undefined, email: undefined, lateHours: 6 });
  });

  it('read a webhook, the recipients, the relay and the sender', () => {
    expect(
      loadConfig({
        RECON_ALERT_WEBHOOK: 'https://hooks.slack.com/services/T0/B0/X',
        RECON_ALERT_EMAIL: ' ops@shop.example,finance@shop.example , ',
        RECON_SMTP_URL: 'smtps://user:pw@mail.shop.example:465',
        RECON_ALERT_FROM: 'recon@shop.example',
        RECON_ALERT_LATE_HOURS: '3',
      }).alerts,
    ).toEqual({
      webhookUrl: 'https://hooks.slack.com/services/T0/B0/X',
      email: {
        to: ['ops@shop.example', 'finance@shop.example'],
        smtpUrl: 'smtps://user:pw@mail.shop.example:465',
        from: 'recon@shop.example',
      },
      lateHours: 3,
    });
  });

  it('refuses e-mail without a relay, and a relay without recipients, naming both variables', async () => {
    expect(await expectReconError(async () => loadConfig({ RECON_ALERT_EMAIL: 'ops@shop.example' }), 'CONFIG')).toMatch(
      /^RECON_ALERT_EMAIL is set but RECON_SMTP_URL is not: set RECON_SMTP_URL to /,
    );
    expect(
      await expectReconError(async () => loadConfig({ RECON_SMTP_URL: 'smtp://mail.shop.example:25' }), 'CONFIG'),
    ).toMatch(/^RECON_SMTP_URL is set but RECON_ALERT_EMAIL is not: set RECON_ALERT_EMAIL to /);
  });

  it.each([
    ['RECON_ALERT_WEBHOOK', 'ftp://hooks.shop.example/T0KEN-SECRET', 'expected an http:// or https:// URL'],
    ['RECON_ALERT_WEBHOOK', 'hooks.shop.example/T0KEN-SECRET', 'expected an http:// or https:// URL'],
    ['RECON_SMTP_URL', 'http://user:T0KEN-SECRET@mail.shop.example', 'expected smtp://host:port or smtps://'],
    ['RECON_SMTP_URL', 'smtp://user:T0KEN-SECRET@', 'expected smtp://host:port or smtps://'],
    ['RECON_ALERT_EMAIL', 'ops@shop.example, not an address', 'expected one or more e-mail addresses'],
    ['RECON_ALERT_FROM', 'recon', 'expected an e-mail address'],
    ['RECON_ALERT_LATE_HOURS', '0', ''],
    ['RECON_ALERT_LATE_HOURS', '73', ''],
  ])('%s=%s is a CONFIG error naming the variable, never repeating the value', async (variable, value, message) => {
    const said = await expectReconError(
      async () => loadConfig({ [variable]: value }),
      'CONFIG',
      `invalid environment variable ${variable}: ${message}`,
    );
    expect(said).not.toContain('T0KEN-SECRET');
  });
});
