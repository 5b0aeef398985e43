import type { Kysely } from 'kysely';
import type { AlertDetails, Schema } from '../db/schema.ts';
import type { NewAlert } from './new-alert.ts';

/**
 * Records an alert to be sent, unless one of the same cause and key exists: an INSERT that does nothing on conflict,
 * so any number of processes may raise the same alert at once and one row, one message, comes of it. Raising sends
 * nothing: the alert check of `recon serve` delivers what is pending (deliver-alerts.ts). `raised` says whether this
 * call made the row.
 */
export async function raiseAlert(
  db: Kysely<Schema>,
  alert: NewAlert,
  now: Date = new Date(),
): Promise<{ raised: boolean; alertId: string | undefined }> {
  const row = await db
    .insertInto('recon.alerts')
    .values({
      cause: alert.cause,
      key: alert.key,
      nightly_run_id: alert.nightlyRunId ?? null,
      // The subject is one line whatever the raiser wrote: a header cannot hold a line break.
      title: alert.title.replace(/\s*\n\s*/g, ' '),
      text: alert.text,
      details: JSON.stringify(detailsOf(alert)),
      raised_at: now,
      next_attempt_at: now,
    })
    .onConflict((conflict) => conflict.columns(['cause', 'key']).doNothing())
    .returning('alert_id')
    .executeTakeFirst();
  return { raised: row !== undefined, alertId: row === undefined ? undefined : String(row.alert_id) };
}

function detailsOf(alert: NewAlert): AlertDetails {
  return {
    ...alert.fields,
    detail: alert.detail,
    ...(alert.nightlyDate === undefined ? {} : { nightlyDate: alert.nightlyDate }),
    ...(alert.state === undefined ? {} : { state: alert.state }),
  };
}
