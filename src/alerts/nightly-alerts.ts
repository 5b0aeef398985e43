import { sql, type Kysely } from 'kysely';
import type { AlertCause, Schema } from '../db/schema.ts';
import { listNightlyRuns } from '../nightly/nightly-run-report.ts';
import { findLateRuns, type LatenessRule } from '../nightly/late-run.ts';
import { failedRunAlert, lateRunAlert, suspectRunAlert, type FinishedRun, type Quote } from './nightly-alert-text.ts';
import type { NewAlert } from './new-alert.ts';

export type NightlyAlertRules = LatenessRule;

const HOUR_MS = 3_600_000;
/**
 * How far back runs are looked at: a run that failed, turned out suspect or became late within it. Well inside the
 * 30 days alerts are kept (prune-alerts.ts), so that a run is never alerted on again once its alert is deleted, and
 * above the longest RECON_ALERT_LATE_HOURS (72).
 */
export const ALERT_HORIZON_DAYS = 7;
const NIGHTLY_CAUSES: readonly AlertCause[] = ['nightly_failed', 'nightly_suspect', 'nightly_late'];

/**
 * The nightly alerts due at `now` and not raised yet: a run failed; a run whose reconciliation is suspect; a late run
 * or a slot with no run (late-run.ts). Each is keyed by the run's date, so one run gives at most one alert per cause.
 */
export async function findNightlyAlerts(
  db: Kysely<Schema>,
  rules: NightlyAlertRules,
  now: Date,
  quote: Quote,
): Promise<NewAlert[]> {
  const horizon = new Date(now.getTime() - ALERT_HORIZON_DAYS * 24 * HOUR_MS);
  const raised = await raisedKeys(db);
  const alerts: NewAlert[] = [];
  const add = (alert: NewAlert) => {
    if (!raised.has(`${alert.cause} ${alert.key}`)) alerts.push(alert);
  };
  for (const run of await finishedRuns(db, horizon)) {
    if (run.state === 'failed' && !raised.has(`nightly_failed ${run.runDate}`))
      add(failedRunAlert({ ...run, givenUp: await givenUpBatches(db, run.nightlyRunId) }, quote));
    if (run.suspect) add(suspectRunAlert(run));
  }
  for (const late of await findLateRuns(db, rules, now, horizon)) {
    if (raised.has(`nightly_late ${late.runDate}`)) continue;
    if (late.nightlyRunId === undefined) {
      add(lateRunAlert({ ...rules, runDate: late.runDate, dueFrom: late.dueFrom }));
      continue;
    }
    const [report] = await listNightlyRuns(db, { nightlyRunId: late.nightlyRunId });
    if (report) add(lateRunAlert({ ...rules, runDate: late.runDate, dueFrom: late.dueFrom, run: report }));
  }
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

/** A failed run's batches given up, each with its latest request's failure: what the alert counts and quotes. */
async function givenUpBatches(db: Kysely<Schema>, nightlyRunId: string): Promise<FinishedRun['givenUp']> {
  return db
    .selectFrom('recon.export_requests')
    .select(['batch', 'failure'])
    .where('nightly_run_id', '=', nightlyRunId)
    .where('state', '=', 'given_up')
    .orderBy('batch')
    .execute();
}

/** Runs that ended (reconciled or failed) within the horizon, with their reconciliation's suspicion. */
async function finishedRuns(
  db: Kysely<Schema>,
  horizon: Date,
): Promise<(Omit<FinishedRun, 'givenUp'> & { suspect: boolean })[]> {
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
