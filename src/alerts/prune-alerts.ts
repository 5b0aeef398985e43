import type { Kysely } from 'kysely';
import type { Schema } from '../db/schema.ts';

/**
 * Alerts are kept 30 days, delivered or not, so the table holds a month of them (a few rows a day) whatever the
 * years. Longer than the nightly alerts look back (ALERT_HORIZON_DAYS, 7), so that no run's alert is raised again
 * once its row is gone.
 */
export const ALERT_RETENTION_DAYS = 30;

export async function pruneAlerts(db: Kysely<Schema>, now: Date): Promise<number> {
  const { numDeletedRows } = await db
    .deleteFrom('recon.alerts')
    .where('raised_at', '<', new Date(now.getTime() - ALERT_RETENTION_DAYS * 24 * 3_600_000))
    .executeTakeFirst();
  return Number(numDeletedRows);
}
