import { sql, type Kysely } from 'kysely';
import type { AlertCause, Schema } from '../db/schema.ts';
import { listNightlyRuns } from '../nightly/nightly-run-report.ts';
import { latestSlot, slotOnDate } from '../nightly/schedule-slot.ts';
import { failedRunAlert, lateRunAlert, suspectRunAlert, type FinishedRun } from './nightly-alert-text.ts';
import type { NewAlert } from './new-alert.ts';

export interface NightlyAlertRules {
  /** RECON_SCHEDULE and RECON_SCHEDULE_TIMEZONE: where each run's slot is. */
  readonly schedule: string;
  readonly timezone: string;
  /** RECON_ALERT_LATE_HOURS. */
  readonly lateHours: number;
}

const HOUR_MS = 3_600_000;
/**
 * How far back runs are looked at: a run that failed, turned out suspect or became late within it. Well inside the
 * 30 days alerts are kept (prune-alerts.ts), so that a run is never alerted on again once its alert is deleted, and
 * above the longest RECON_ALERT_LATE_HOURS (72).
 */
export const ALERT_HORIZON_DAYS = 7;
const NIGHTLY_CAUSES: readonly AlertCause[] = ['nightly_failed', 'nightly_suspect', 'nightly_late'];

/**
 * The nightly alerts due at `now` and not raised yet: a run failed; a run whose reconciliation is suspect; a run not
 * reconciled `lateHours` after its slot (or after it was started, for a run started by hand after its slot), and a
 * slot that passed `lateHours` ago with no run at all, once recon has made a nightly run before it (a new install is
 * not late for the slots before its first run). Each is keyed by the run's date, so one run gives at most one alert
 * per cause.
 */
export async function findNightlyAlerts(db: Kysely<Schema>, rules: NightlyAlertRules, now: Date): Promise<NewAlert[]> {
  const horizon = new Date(now.getTime() - ALERT_HORIZON_DAYS * 24 * HOUR_MS);
  const raised = await raisedKeys(db);
  const alerts: NewAlert[] = [];
  const add = (alert: NewAlert) => {
    if (!raised.has(`${alert.cause} ${alert.key}`)) alerts.push(alert);
  };
  for (const run of await finishedRuns(db, horizon)) {
    if (run.state === 'failed') add(failedRunAlert(run));
    if (run.suspect) add(suspectRunAlert(run));
  }
  const lateMs = rules.lateHours * HOUR_MS;
  for (const run of await unfinishedRuns(db, horizon)) {
    const slot = slotOnDate(rules.schedule, rules.timezone, run.runDate)?.at;
    const dueFrom = slot && slot > run.startedAt ? slot : run.startedAt;
    if (now.getTime() - dueFrom.getTime() < lateMs || raised.has(`nightly_late ${run.runDate}`)) continue;
    const [report] = await listNightlyRuns(db, { nightlyRunId: run.nightlyRunId });
    if (!report) continue;
    add(lateRunAlert({ ...rules, runDate: run.runDate, dueFrom, run: report }));
  }
  const missing = await missingRun(db, rules, new Date(now.getTime() - lateMs), horizon);
  if (missing) add(lateRunAlert({ ...rules, runDate: missing.runDate, dueFrom: missing.at }));
  return alerts;
}

/** The nightly alerts raised already: a few a day at most, kept 30 days. Raising them again would do nothing anyway. */
async function raisedKeys(db: Kysely<Schema>): Promise<Set<string>> {
  const rows = await db
    .selectFrom('recon.alerts')
    .select(['cause', 'key'])
    .where('cause', 'in', NIGHTLY_CAUSES)
    .execute();
  return new Set(rows.map((row) => `${row.cause} ${row.key}`));
}

/** Runs that ended (reconciled or failed) within the horizon, with their reconciliation's suspicion. */
async function finishedRuns(db: Kysely<Schema>, horizon: Date): Promise<(FinishedRun & { suspect: boolean })[]> {
  const rows = await db
    .selectFrom('recon.nightly_runs as n')
    .leftJoin('recon.reconciliation_runs as r', 'r.run_id', 'n.reconciliation_run_id')
    .select([
      'n.nightly_run_id',
      sql<string>`n.run_date::text`.as('run_date'),
      'n.state',
      'n.failure',
      'n.reconciliation_run_id',
      sql<boolean>`coalesce(r.suspect, false)`.as('suspect'),
      'r.suspect_reason',
    ])
    .where('n.state', 'in', ['reconciled', 'failed'])
    .where(sql<Date>`coalesce(n.finished_at, n.updated_at)`, '>=', horizon)
    .orderBy('n.run_date')
    .execute();
  return rows.map((row) => ({
    nightlyRunId: String(row.nightly_run_id),
    runDate: row.run_date,
    state: row.state,
    failure: row.failure,
    reconciliationRunId: row.reconciliation_run_id === null ? null : String(row.reconciliation_run_id),
    suspect: row.suspect,
    suspectReason: row.suspect_reason,
  }));
}

async function unfinishedRuns(
  db: Kysely<Schema>,
  horizon: Date,
): Promise<{ nightlyRunId: string; runDate: string; startedAt: Date }[]> {
  const rows = await db
    .selectFrom('recon.nightly_runs')
    .select(['nightly_run_id', sql<string>`run_date::text`.as('run_date'), 'started_at'])
    .where('state', 'not in', ['reconciled', 'failed'])
    .where('started_at', '>=', horizon)
    .orderBy('run_date')
    .execute();
  return rows.map((row) => ({
    nightlyRunId: String(row.nightly_run_id),
    runDate: row.run_date,
    startedAt: new Date(row.started_at),
  }));
}

/** The latest slot at or before `dueBefore` when it has no run, recon made a run before it, and it is in the horizon. */
async function missingRun(
  db: Kysely<Schema>,
  rules: NightlyAlertRules,
  dueBefore: Date,
  horizon: Date,
): Promise<{ runDate: string; at: Date } | undefined> {
  const slot = latestSlot(rules.schedule, rules.timezone, dueBefore);
  if (slot.at < horizon) return undefined;
  const run = await db
    .selectFrom('recon.nightly_runs')
    .select('nightly_run_id')
    .where('run_date', '=', sql<Date>`${slot.runDate}::date`)
    .executeTakeFirst();
  if (run) return undefined;
  const earlier = await db
    .selectFrom('recon.nightly_runs')
    .select('nightly_run_id')
    .where('started_at', '<', slot.at)
    .limit(1)
    .executeTakeFirst();
  return earlier ? slot : undefined;
}
