import type { Selectable } from 'kysely';
import type { AlertsTable } from '../db/schema.ts';
import type { AlertMail } from './email-channel.ts';
import { channelSafe } from './channel-safe-text.ts';
import { scrubSecrets } from './redact.ts';

type AlertRow = Pick<
  Selectable<AlertsTable>,
  'alert_id' | 'cause' | 'key' | 'nightly_run_id' | 'title' | 'text' | 'details' | 'raised_at'
>;

/**
 * Bounds on what one field of an alert may send. The text is recon's sentences and one short quote; an alert raised
 * by an earlier version may hold a failure quoted whole, many times over, and is cut here.
 */
const TEXT_CHARS = 1_000;
const FIELD_CHARS = 400;

/**
 * The webhook's JSON body: `text` first, which Slack's and Mattermost's incoming webhooks post as the message, then
 * the alert's fields for whatever else reads it. Every string passes the secrets' scrub on the way out, then the
 * channels' guard (channel-safe-text.ts): no mention or link syntax, and a bound.
 */
export function webhookBody(alert: AlertRow, secrets: readonly string[]): Record<string, string | null> {
  const { detail = '', nightlyDate = null, state = null, ...rest } = detailsOf(alert);
  const body: Record<string, string | null> = {
    text: alert.text,
    title: alert.title,
    cause: alert.cause,
    key: alert.key,
    nightlyDate,
    runId: alert.nightly_run_id === null ? null : String(alert.nightly_run_id),
    state,
    detail,
    ...rest,
    raisedAt: new Date(alert.raised_at).toISOString(),
    alertId: String(alert.alert_id),
    source: 'recon',
  };
  return Object.fromEntries(
    Object.entries(body).map(([name, value]) => [
      name,
      value === null ? null : channelSafe(scrubSecrets(value, secrets), name === 'text' ? TEXT_CHARS : FIELD_CHARS),
    ]),
  );
}

/**
 * The e-mail: the title as subject, the text, then the same fields as the webhook's, one a line, but `detail`, which
 * the text says already: what it quotes is quoted once. Plain text only, so no HTML in it is ever rendered.
 */
export function alertMail(alert: AlertRow, secrets: readonly string[]): AlertMail {
  const { text, title, detail: _said, ...fields } = webhookBody(alert, secrets);
  const lines = Object.entries(fields)
    .filter(([, value]) => value !== null && value !== '')
    .map(([name, value]) => `${name}: ${value}`);
  return { subject: title!, text: `${text}\n\n${lines.join('\n')}\n` };
}

function detailsOf(alert: AlertRow): Record<string, string> {
  const details: unknown = typeof alert.details === 'string' ? JSON.parse(alert.details) : alert.details;
  return details !== null && typeof details === 'object' ? { ...(details as Record<string, string>) } : {};
}
