import { describe, expect, it } from 'vitest';
import { alertSecrets } from '../../src/alerts/alert-secrets.ts';
import { redactUrl, scrubSecrets } from '../../src/alerts/redact.ts';
import { loadConfig } from '../../src/config/config.ts';

describe('what alerts may say about where they go', () => {
  it('shows a webhook by its origin only: its path and query may be its token', () => {
    expect(redactUrl('https://hooks.slack.com/services/T000/B000/XXXXSECRET')).toBe('https://hooks.slack.com/…');
    expect(redactUrl('https://chat.shop.example/hooks/abc?token=SECRET')).toBe('https://chat.shop.example/…');
    expect(redactUrl('https://user:pw@chat.shop.example:8443/')).toBe('https://chat.shop.example:8443/');
    expect(redactUrl('http://127.0.0.1:9000')).toBe('http://127.0.0.1:9000/');
  });

  it('takes every secret of the configuration out of a text, the longest first', () => {
    const config = loadConfig({
      RECON_SECRET: 'hash-key-0001',
      RECON_ALERT_WEBHOOK: 'https://hooks.slack.com/services/T000/B000/XXXXSECRET?x=1',
      RECON_ALERT_EMAIL: 'ops@shop.example',
      RECON_SMTP_URL: 'smtps://alerts%40shop.example:p%40ss-word@mail.shop.example:465',
    });
    const secrets = alertSecrets(config);
    const text =
      'posting to https://hooks.slack.com/services/T000/B000/XXXXSECRET?x=1 failed; path /services/T000/B000/XXXXSECRET; ' +
      'HASH hash-key-0001; SMTP p@ss-word and p%40ss-word';
    expect(scrubSecrets(text, secrets)).toBe(
      'posting to [redacted] failed; path [redacted]; HASH [redacted]; SMTP [redacted] and [redacted]',
    );
    // Too short to take out without blanking ordinary words.
    expect(scrubSecrets('a cat', ['a'])).toBe('a cat');
  });
});
