import type { Kysely } from 'kysely';
import type { Schema } from '../db/schema.ts';
import { pruneReportJson, type PruneReport } from './prune-report.ts';

/**
 * Claims the daily prune of `day` (YYYY-MM-DD): inserts its row, or takes over the row of a prune of that day that
 * failed. Returns the prune's id, or undefined when the day is another's: done, or under way in some process. The
 * unique index on the day makes any number of recon serve processes, checking at once, prune once a day.
 * A process killed mid-prune leaves its day unfinished and unclaimable: the next day's prune carries on from where it
 * stopped, every batch before having committed.
 */
export async function claimDailyPrune(db: Kysely<Schema>, day: string, now: Date): Promise<string | undefined> {
  const row = await db
    .insertInto('recon.prunes')
    .values({ started_by: 'schedule', day, started_at: now })
    .onConflict((conflict) =>
      conflict
        .column('day')
        .where('started_by', '=', 'schedule')
        .doUpdateSet({ started_at: now, finished_at: null, failure: null, removed: null })
        .where('recon.prunes.failure', 'is not', null),
    )
    .returning('prune_id')
    .executeTakeFirst();
  return row === undefined ? undefined : String(row.prune_id);
}

/** Records a prune by `recon prune` as started. */
export async function startCommandPrune(db: Kysely<Schema>, now: Date): Promise<string> {
  const row = await db
    .insertInto('recon.prunes')
    .values({ started_by: 'command', day: null, started_at: now })
    .returning('prune_id')
    .executeTakeFirstOrThrow();
  return String(row.prune_id);
}

export async function finishPrune(db: Kysely<Schema>, pruneId: string, report: PruneReport, now: Date): Promise<void> {
  await db
    .updateTable('recon.prunes')
    .set({ finished_at: now, removed: JSON.stringify(pruneReportJson(report)), failure: null })
    .where('prune_id', '=', pruneId)
    .execute();
}

/** Records why a prune stopped: a daily one is claimed again at the next check. */
export async function failPrune(db: Kysely<Schema>, pruneId: string, failure: string): Promise<void> {
  await db.updateTable('recon.prunes').set({ failure }).where('prune_id', '=', pruneId).execute();
}

/** When the latest prune that finished did, whoever started it; undefined before the first. */
export async function lastPruneFinished(db: Kysely<Schema>): Promise<Date | undefined> {
  const row = await db
    .selectFrom('recon.prunes')
    .select((eb) => eb.fn.max<Date | null>('finished_at').as('finished_at'))
    .where('failure', 'is', null)
    .executeTakeFirst();
  return row?.finished_at ?? undefined;
}
