import { sql, type Kysely } from 'kysely';
import type { NightlyRunState, Schema } from '../db/schema.ts';

export interface NightlyRun {
  readonly nightlyRunId: string;
  readonly runDate: string;
  readonly state: NightlyRunState;
  readonly asOf: Date;
}

/**
 * The run of `runDate`, created if it has none: the date is unique, so every scheduler and every `recon nightly`
 * that asks for one slot ends up with the same run, whichever got there first. `created` says whether this call
 * made it (and must therefore set it going).
 */
export async function startNightlyRun(
  db: Kysely<Schema>,
  runDate: string,
  asOf: Date,
): Promise<{ run: NightlyRun; created: boolean }> {
  const inserted = await db
    .insertInto('recon.nightly_runs')
    .values({ run_date: runDate, as_of: asOf })
    .onConflict((conflict) => conflict.column('run_date').doNothing())
    .returning(['nightly_run_id', sql<string>`run_date::text`.as('run_date'), 'state', 'as_of'])
    .executeTakeFirst();
  if (inserted) return { run: toRun(inserted), created: true };
  const existing = await db
    .selectFrom('recon.nightly_runs')
    .select(['nightly_run_id', sql<string>`run_date::text`.as('run_date'), 'state', 'as_of'])
    .where('run_date', '=', sql<Date>`${runDate}::date`)
    .executeTakeFirstOrThrow();
  return { run: toRun(existing), created: false };
}

export async function findNightlyRun(db: Kysely<Schema>, nightlyRunId: string): Promise<NightlyRun | undefined> {
  const row = await db
    .selectFrom('recon.nightly_runs')
    .select(['nightly_run_id', sql<string>`run_date::text`.as('run_date'), 'state', 'as_of'])
    .where('nightly_run_id', '=', nightlyRunId)
    .executeTakeFirst();
  return row && toRun(row);
}

/** The date read as text: a date column read as a Date is local midnight, a day off east of UTC. */
function toRun(row: {
  nightly_run_id: string;
  run_date: string;
  state: NightlyRunState;
  as_of: Date | string;
}): NightlyRun {
  return {
    nightlyRunId: String(row.nightly_run_id),
    runDate: row.run_date,
    state: row.state,
    asOf: new Date(row.as_of),
  };
}
