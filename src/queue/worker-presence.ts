import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import type { Kysely } from 'kysely';
import type { Schema } from '../db/schema.ts';

/** A worker says it is alive this often... */
export const PRESENCE_INTERVAL_MS = 10_000;
/** ...and counts as gone once it has not for this long: three missed beats, not one slow query. */
export const PRESENCE_LAPSE_MS = 30_000;
/** A crashed worker's row is removed by the next worker to start once it is this old. */
const FORGOTTEN_AFTER_MS = 24 * 3_600_000;

export interface WorkerPresence {
  readonly workerId: string;
  /** Stops the beats and removes the row: a worker that stops is gone at once. */
  stop(): Promise<void>;
}

/**
 * Makes this process's worker visible in recon.workers until stop(). A beat that fails (the database away for a
 * while) is reported and the next one tries again: presence is a hint for people waiting, never a reason to stop.
 */
export async function announceWorker(
  db: Kysely<Schema>,
  options: { readonly now?: () => Date; readonly onError?: (error: unknown) => void } = {},
): Promise<WorkerPresence> {
  const now = options.now ?? (() => new Date());
  const workerId = randomUUID();
  const started = now();
  await db
    .deleteFrom('recon.workers')
    .where('seen_at', '<', new Date(started.getTime() - FORGOTTEN_AFTER_MS))
    .execute();
  await db
    .insertInto('recon.workers')
    .values({ worker_id: workerId, host: hostname(), pid: process.pid, started_at: started, seen_at: started })
    .execute();
  const beat = async () => {
    try {
      await db.updateTable('recon.workers').set({ seen_at: now() }).where('worker_id', '=', workerId).execute();
    } catch (error) {
      options.onError?.(error);
    }
  };
  const timer = setInterval(() => void beat(), PRESENCE_INTERVAL_MS);
  timer.unref();
  return {
    workerId,
    async stop() {
      clearInterval(timer);
      await db.deleteFrom('recon.workers').where('worker_id', '=', workerId).execute();
    },
  };
}

export interface LiveWorkers {
  readonly count: number;
  /** When the most recently seen worker, alive or not, was last seen; null when none ever was (or all stopped). */
  readonly lastSeenAt: Date | null;
}

/** The workers seen within PRESENCE_LAPSE_MS of `now`. */
export async function liveWorkers(db: Kysely<Schema>, now: Date = new Date()): Promise<LiveWorkers> {
  const row = await db
    .selectFrom('recon.workers')
    .select((eb) => [
      eb.fn
        .countAll<string>()
        .filterWhere('seen_at', '>=', new Date(now.getTime() - PRESENCE_LAPSE_MS))
        .as('live'),
      eb.fn.max('seen_at').as('last_seen_at'),
    ])
    .executeTakeFirstOrThrow();
  return {
    count: Number(row.live),
    lastSeenAt: row.last_seen_at === null ? null : new Date(row.last_seen_at),
  };
}
