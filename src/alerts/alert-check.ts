import type { Kysely } from 'kysely';
import { alertsEnabled, type AlertConfig } from '../config/config.ts';
import type { Schema } from '../db/schema.ts';
import { silentLogger, type Logger } from '../log/logger.ts';
import { findCallbackAlerts } from './callback-alerts.ts';
import { deliverPendingAlerts, type DeliveryReport } from './deliver-alerts.ts';
import { findNightlyAlerts } from './nightly-alerts.ts';
import { pruneAlerts } from './prune-alerts.ts';
import { raiseAlert } from './raise-alert.ts';
import { quoteForAlert } from './channel-safe-text.ts';
import { scrubSecrets } from './redact.ts';

export interface AlertCheckOptions {
  readonly alerts: AlertConfig;
  /** RECON_SCHEDULE and RECON_SCHEDULE_TIMEZONE. */
  readonly schedule: string;
  readonly timezone: string;
  /** Strings no alert or log line may hold (alert-secrets.ts). */
  readonly secrets: readonly string[];
  readonly now?: () => Date;
  /** Each alert raised (warn), delivered (info), failed (warn) or given up (error). */
  readonly log?: Logger;
  readonly webhookTimeoutMs?: number;
  readonly smtpTimeoutMs?: number;
  /** A drain: the sends in flight are cut and handed back (deliver-alerts.ts). */
  readonly stop?: AbortSignal;
}

export interface AlertCheck extends DeliveryReport {
  /** The alerts this check raised (another process may have raised others). */
  readonly raised: number;
}

/**
 * One pass of the alert check: raises the alerts now due (the nightly runs', and the callback base's from the
 * probes any process recorded), sends what is pending (these and any raised elsewhere with raiseAlert), and deletes
 * alerts past their retention. Without a channel it does nothing at all: no alert is looked for, none is sent.
 */
export async function checkAlerts(db: Kysely<Schema>, options: AlertCheckOptions): Promise<AlertCheck> {
  if (!alertsEnabled(options.alerts)) return { raised: 0, delivered: 0, failed: 0, givenUp: 0 };
  const now = options.now ?? (() => new Date());
  const log = options.log ?? silentLogger;
  let raised = 0;
  const quote = (text: string) => quoteForAlert(text, options.secrets);
  const due = [
    ...(await findNightlyAlerts(
      db,
      { schedule: options.schedule, timezone: options.timezone, lateHours: options.alerts.lateHours },
      now(),
      quote,
    )),
    ...(await findCallbackAlerts(db, options.timezone, now(), quote)),
  ];
  for (const alert of due) {
    const { alertId } = await raiseAlert(db, alert, now());
    if (alertId === undefined) continue;
    raised++;
    log.warn(
      { alert: alertId, cause: alert.cause, key: alert.key },
      `alert raised: ${scrubSecrets(alert.title, options.secrets)}`,
    );
  }
  const report = await deliverPendingAlerts(db, {
    channels: options.alerts,
    secrets: options.secrets,
    now,
    log,
    ...(options.webhookTimeoutMs === undefined ? {} : { webhookTimeoutMs: options.webhookTimeoutMs }),
    ...(options.smtpTimeoutMs === undefined ? {} : { smtpTimeoutMs: options.smtpTimeoutMs }),
    ...(options.stop === undefined ? {} : { stop: options.stop }),
  });
  await pruneAlerts(db, now());
  return { raised, ...report };
}
