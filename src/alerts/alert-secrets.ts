import type { Config } from '../config/config.ts';

/**
 * The strings no alert, delivery error or log line of the alerts may hold: every account's secret (the HASH key), the
 * SMTP relay's password, and the webhook URL's token-bearing parts (its path, query and password).
 */
export function alertSecrets(config: Pick<Config, 'service' | 'alerts'>): string[] {
  const secrets: string[] = [];
  secrets.push(...config.service.secrets);
  const { webhookUrl, email } = config.alerts;
  if (webhookUrl) {
    const url = new URL(webhookUrl);
    secrets.push(webhookUrl, url.href);
    if (url.pathname !== '/') secrets.push(url.pathname, url.pathname + url.search);
    if (url.search) secrets.push(url.search.slice(1));
    if (url.password) secrets.push(url.password, decodeURIComponent(url.password));
  }
  if (email) {
    const url = new URL(email.smtpUrl);
    if (url.password) secrets.push(url.password, decodeURIComponent(url.password));
  }
  return [...new Set(secrets)];
}
