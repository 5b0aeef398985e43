import { retryDelay, type RetryPolicy } from '@recon/protocol';
import { sql, type Expression, type ExpressionBuilder, type Kysely, type Selectable, type SqlBool } from 'kysely';
import type { AlertEmailConfig } from '../config/config.ts';
import type { AlertsTable, Schema } from '../db/schema.ts';
import { describeError, isReconError } from '../errors.ts';
import { silentLogger, type Logger } from '../log/logger.ts';
import { alertMail, webhookBody } from './alert-message.ts';
import { sendAlertMail } from './email-channel.ts';
import { scrubSecrets } from './redact.ts';
import { postAlertWebhook } from './webhook-channel.ts';

/** Where alerts go: RECON_ALERT_WEBHOOK, RECON_ALERT_EMAIL with RECON_SMTP_URL. */
export interface AlertChannels {
  readonly webhookUrl: string | undefined;
  readonly email: AlertEmailConfig | undefined;
}

export interface DeliveryOptions {
  readonly channels: AlertChannels;
  /** Strings no message, stored error or log line may hold (alert-secrets.ts). */
  readonly secrets: readonly string[];
  readonly now: () => Date;
  readonly log?: Logger;
  /** Each send's bound, the whole exchange: 10 s for the webhook and 30 s for the relay by default. */
  readonly webhookTimeoutMs?: number;
  readonly smtpTimeoutMs?: number;
  /**
   * Aborted by a drain: nothing more is claimed, the sends in flight are cut, and an alert not sent is handed back
   * (its claim and its try undone) for the next process to send at once.
   */
  readonly stop?: AbortSignal;
}

export interface DeliveryReport {
  /** Alerts whose every channel is now delivered. */
  readonly delivered: number;
  /** Alerts a channel failed for this time (to be tried again, or given up). */
  readonly failed: number;
  readonly givenUp: number;
  /** Alerts whose sends a drain cut short: pending again, for the next process. */
  readonly unsent?: number;
}

/**
 * Each failure waits longer before the next try, from 30 s to an hour (the protocol's backoff, jittered so that
 * processes do not come back together); an alert not delivered after 20 tries (about 14 hours) or a day is given up.
 */
export const ALERT_RETRY: RetryPolicy = { attempts: 20, baseDelayMs: 30_000, maxDelayMs: 3_600_000, jitter: true };
const MAX_AGE_MS = 24 * 3_600_000;
/**
 * A claimed alert is not claimed again before this: well past the sends' timeouts, so a live process finishes first;
 * a process killed mid-send leaves its alert to be sent again once the lease ends (a rare duplicate, never a loss).
 */
const CLAIM_LEASE_MS = 5 * 60_000;
const CLAIM_BATCH = 20;

type AlertRow = Selectable<AlertsTable>;
type AlertFilter = (eb: ExpressionBuilder<Schema, 'recon.alerts'>) => Expression<SqlBool>;
type Channel = 'webhook' | 'email';

/**
 * Sends what is pending on the channels configured here. An alert is claimed by moving its next_attempt_at past a
 * lease, in one UPDATE of rows picked FOR UPDATE SKIP LOCKED: of processes claiming at once, each gets other alerts or
 * none, none waits, and no transaction stays open while a message is sent. Then each channel not yet delivered is
 * sent and its outcome recorded: a channel delivered is never sent again (a webhook that failed does not send the
 * e-mail twice), a failure is tried again after a backoff, until the alert is given up. The claimed alerts are sent
 * at once, each bounded by its channels' timeouts: a webhook that hangs holds no other alert up.
 */
export async function deliverPendingAlerts(db: Kysely<Schema>, options: DeliveryOptions): Promise<DeliveryReport> {
  const { channels } = options;
  if ((!channels.webhookUrl && !channels.email) || options.stop?.aborted)
    return { delivered: 0, failed: 0, givenUp: 0 };
  const pending: AlertFilter = (eb) =>
    eb.or([
      ...(channels.webhookUrl ? [eb('webhook_delivered_at', 'is', null)] : []),
      ...(channels.email ? [eb('email_delivered_at', 'is', null)] : []),
    ]);
  let givenUp = await giveUpStale(db, options, pending);
  const now = options.now();
  const claimed = await db
    .updateTable('recon.alerts')
    .set({ attempts: sql<number>`attempts + 1`, next_attempt_at: new Date(now.getTime() + CLAIM_LEASE_MS) })
    .where('alert_id', 'in', (eb) =>
      eb
        .selectFrom('recon.alerts')
        .select('alert_id')
        .where('given_up_at', 'is', null)
        .where('next_attempt_at', '<=', now)
        .where(pending)
        .orderBy('alert_id')
        .limit(CLAIM_BATCH)
        .forUpdate()
        .skipLocked(),
    )
    .returningAll()
    .execute();
  const outcomes = await Promise.all(
    claimed.sort((a, b) => Number(a.alert_id) - Number(b.alert_id)).map((alert) => sendAlert(db, alert, options)),
  );
  const count = (...wanted: Outcome[]) => outcomes.filter((outcome) => wanted.includes(outcome)).length;
  givenUp += count('given up');
  const unsent = count('unsent');
  return {
    delivered: count('delivered'),
    failed: count('failed', 'given up'),
    givenUp,
    ...(unsent > 0 ? { unsent } : {}),
  };
}

/** Alerts pending for more than a day are given up untried: news that stale helps no one (a channel set since). */
async function giveUpStale(db: Kysely<Schema>, options: DeliveryOptions, pending: AlertFilter): Promise<number> {
  const now = options.now();
  const stale = await db
    .updateTable('recon.alerts')
    .set({ given_up_at: now, last_error: sql<string>`coalesce(last_error, 'not delivered within a day')` })
    .where('given_up_at', 'is', null)
    .where('raised_at', '<', new Date(now.getTime() - MAX_AGE_MS))
    .where(pending)
    .returning(['alert_id', 'cause', 'key', 'title'])
    .execute();
  for (const alert of stale)
    (options.log ?? silentLogger).error(
      { alert: alert.alert_id, cause: alert.cause, key: alert.key },
      `alert ${alert.alert_id} given up, not delivered within a day: ${scrub(alert.title, options)}`,
    );
  return stale.length;
}

type Outcome = 'delivered' | 'failed' | 'given up' | 'unsent';

async function sendAlert(db: Kysely<Schema>, alert: AlertRow, options: DeliveryOptions): Promise<Outcome> {
  const { channels, secrets } = options;
  const sends: { channel: Channel; sent: Promise<void> }[] = [];
  if (channels.webhookUrl && alert.webhook_delivered_at === null) {
    const body = webhookBody(alert, secrets);
    sends.push({
      channel: 'webhook',
      sent: postAlertWebhook(channels.webhookUrl, body, options.webhookTimeoutMs ?? 10_000, options.stop),
    });
  }
  if (channels.email && alert.email_delivered_at === null) {
    const mail = alertMail(alert, secrets);
    sends.push({
      channel: 'email',
      sent: sendAlertMail(channels.email, mail, options.smtpTimeoutMs ?? 30_000, options.stop),
    });
  }
  const outcomes = await Promise.allSettled(sends.map((entry) => entry.sent));
  const now = options.now();
  const delivered = deliveredFields(sends, outcomes, now);
  const cut = outcomes.some((outcome) => outcome.status === 'rejected' && isReconError(outcome.reason, 'INTERRUPTED'));
  if (cut) return handBack(db, alert, delivered, options);
  const failures = outcomes.flatMap((outcome) =>
    outcome.status === 'rejected' ? [scrub(describeError(outcome.reason), options)] : [],
  );
  const givingUp = failures.length > 0 && alert.attempts >= ALERT_RETRY.attempts;
  const nextAttemptAt = new Date(now.getTime() + retryDelay(alert.attempts, ALERT_RETRY));
  await db
    .updateTable('recon.alerts')
    .set({
      ...delivered,
      ...(failures.length > 0 ? { last_error: failures.join('; '), next_attempt_at: nextAttemptAt } : {}),
      ...(givingUp ? { given_up_at: now } : {}),
    })
    .where('alert_id', '=', alert.alert_id)
    .execute();
  const log = options.log ?? silentLogger;
  const fields = { alert: alert.alert_id, cause: alert.cause, key: alert.key };
  const title = scrub(alert.title, options);
  if (failures.length === 0) {
    log.info(
      { ...fields, channels: sends.map((entry) => entry.channel) },
      `alert ${alert.alert_id} delivered: ${title}`,
    );
    return 'delivered';
  }
  if (givingUp)
    log.error(
      { ...fields, tries: alert.attempts },
      `alert ${alert.alert_id} given up after ${alert.attempts} tries (${title}): ${failures.join('; ')}`,
    );
  else
    log.warn(
      { ...fields, try: alert.attempts, nextTryAt: nextAttemptAt.toISOString() },
      `alert ${alert.alert_id} not delivered (${title}), try ${alert.attempts} of ${ALERT_RETRY.attempts}, again from ${nextAttemptAt.toISOString()}: ${failures.join('; ')}`,
    );
  return givingUp ? 'given up' : 'failed';
}

/**
 * An alert whose send a drain cut short: what was delivered is recorded, and the claim and its try are undone, so
 * that the next process's first check sends the rest at once rather than after the lease.
 */
async function handBack(
  db: Kysely<Schema>,
  alert: AlertRow,
  delivered: DeliveredFields,
  options: DeliveryOptions,
): Promise<'unsent'> {
  await db
    .updateTable('recon.alerts')
    .set({
      ...delivered,
      attempts: sql<number>`greatest(attempts - 1, 0)`,
      next_attempt_at: options.now(),
    })
    .where('alert_id', '=', alert.alert_id)
    .execute();
  (options.log ?? silentLogger).info(
    { alert: alert.alert_id, cause: alert.cause, key: alert.key },
    `alert ${alert.alert_id} not sent before the drain, left pending for the next process: ${scrub(alert.title, options)}`,
  );
  return 'unsent';
}

type DeliveredFields = { webhook_delivered_at?: Date; email_delivered_at?: Date };

/** The delivery time of each channel whose send succeeded: a channel delivered is never sent again. */
function deliveredFields(
  sends: readonly { channel: Channel }[],
  outcomes: readonly PromiseSettledResult<void>[],
  now: Date,
): DeliveredFields {
  const on = (channel: Channel) =>
    sends.some((entry, index) => entry.channel === channel && outcomes[index]!.status === 'fulfilled');
  return {
    ...(on('webhook') ? { webhook_delivered_at: now } : {}),
    ...(on('email') ? { email_delivered_at: now } : {}),
  };
}

function scrub(text: string, options: DeliveryOptions): string {
  return scrubSecrets(text, options.secrets);
}
