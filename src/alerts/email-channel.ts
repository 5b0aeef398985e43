import nodemailer, { type SendMailOptions } from 'nodemailer';
import type { AlertEmailConfig } from '../config/config.ts';
import { ReconError } from '../errors.ts';

export interface AlertMail {
  readonly subject: string;
  readonly text: string;
}

/**
 * Sends one alert e-mail to every address of RECON_ALERT_EMAIL through the relay of RECON_SMTP_URL: smtps:// is TLS
 * from the start, smtp:// upgrades with STARTTLS when the relay offers it. Every step has `timeoutMs` (connecting,
 * the greeting, each read) and so has the whole exchange. A failure is ReconError ALERT_DELIVERY naming the relay
 * by host and port, never with its user or password. `stop` (a drain) cuts the exchange short, its connection
 * closed, as ReconError INTERRUPTED: not sent, not failed.
 */
export async function sendAlertMail(
  email: AlertEmailConfig,
  mail: AlertMail,
  timeoutMs: number,
  stop?: AbortSignal,
): Promise<void> {
  const relay = new URL(email.smtpUrl);
  const secure = relay.protocol === 'smtps:';
  const port = relay.port === '' ? (secure ? 465 : 587) : Number(relay.port);
  const host = relay.hostname.replace(/^\[(.*)\]$/, '$1');
  const where = `SMTP relay ${host}:${port}`;
  const transport = nodemailer.createTransport({
    host,
    port,
    secure,
    ...(relay.username
      ? { auth: { user: decodeURIComponent(relay.username), pass: decodeURIComponent(relay.password) } }
      : {}),
    connectionTimeout: timeoutMs,
    greetingTimeout: timeoutMs,
    socketTimeout: timeoutMs,
  });
  const timeout = AbortSignal.timeout(timeoutMs);
  // nodemailer closes the connection when its signal aborts (its types do not say so yet).
  const message: SendMailOptions & { signal: AbortSignal } = {
    from: email.from,
    to: [...email.to],
    subject: mail.subject,
    text: mail.text,
    signal: stop ? AbortSignal.any([timeout, stop]) : timeout,
  };
  try {
    await transport.sendMail(message);
  } catch (error) {
    if (timeout.aborted) throw new ReconError('ALERT_DELIVERY', `${where}: not done within ${timeoutMs} ms`);
    if (stop?.aborted) throw new ReconError('INTERRUPTED', `${where}: not sent, recon is stopping`, { cause: error });
    throw new ReconError('ALERT_DELIVERY', `${where}: ${smtpFailure(error)}`, { cause: error });
  } finally {
    transport.close();
  }
}

/** nodemailer's code and the relay's answer (`535 5.7.8 Authentication failed`), which name no credential. */
function smtpFailure(error: unknown): string {
  const { code, responseCode, response, message } = error as {
    code?: string;
    responseCode?: number;
    response?: string;
    message?: string;
  };
  const answer = typeof response === 'string' ? response.replace(/\s+/g, ' ').slice(0, 200) : undefined;
  if (answer) return `${code ?? 'refused'}: ${answer}`;
  return [code, responseCode, message].filter((part) => part !== undefined).join(': ') || 'failed';
}
