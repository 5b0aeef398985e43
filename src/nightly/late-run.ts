import { sql, type Kysely } from 'kysely';
import type { Schema } from '../db/schema.ts';
import { latestSlot, slotOnDate } from './schedule-slot.ts';

export interface LatenessRule {
  /** RECON_SCHEDULE and RECON_SCHEDULE_TIMEZONE: where each run's slot is. */
  readonly schedule: string;
  readonly timezone: string;
  /** RECON_ALERT_LATE_HOURS. */
  readonly lateHours: number;
}

export interface LateRun {
  /** The run's date: its key, or the date of a slot that has no run. */
  readonly runDate: string;
  /** From when the run was due: its slot, or its start for a run started by hand after its slot. */
  readonly dueFrom: Date;
  /** Absent for a slot that has no run at all. */
  readonly nightlyRunId?: string;
}

const HOUR_MS = 3_600_000;

/**
 * The nightly runs late at `now`, the one rule both the alerts and /metrics apply: a run started since `horizon`
 * and not finished (reconciled or failed) `lateHours` after its slot (or after it was started, for a run started by
 * hand after its slot), and the latest slot that passed `lateHours` ago with no run at all, once recon has made a
 * nightly run before it (a new install is not late for the slots before its first run).
 */
export async function findLateRuns(
  db: Kysely<Schema>,
  rule: LatenessRule,
  now: Date,
  horizon: Date,
): Promise<LateRun[]> {
  const lateMs = rule.lateHours * HOUR_MS;
  const late: LateRun[] = [];
  for (const run of await unfinishedRuns(db, horizon)) {
    const slot = slotOnDate(rule.schedule, rule.timezone, run.runDate)?.at;
    const dueFrom = slot && slot > run.startedAt ? slot : run.startedAt;
    if (now.getTime() - dueFrom.getTime() >= lateMs)
      late.push({ runDate: run.runDate, dueFrom, nightlyRunId: run.nightlyRunId });
  }
  const missing = await missingRun(db, rule, new Date(now.getTime() - lateMs), horizon);
  if (missing) late.push({ runDate: missing.runDate, dueFrom: missing.at });
  return late;
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
  rule: LatenessRule,
  dueBefore: Date,
  horizon: Date,
): Promise<{ runDate: string; at: Date } | undefined> {
  const slot = latestSlot(rule.schedule, rule.timezone, dueBefore);
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
