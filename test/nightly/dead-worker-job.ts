import { sql, type Kysely } from 'kysely';
import type { PgBoss } from 'pg-boss';
import type { Schema } from '../../src/db/schema.ts';
import { waitUntil } from '../support/wait-until.ts';

/**
 * A killed worker's job, the waits pg-boss counts in real seconds from its row moved to now: its heartbeat made an
 * hour old (pg-boss's shortest is 10 s), then, once a supervisor pass of a running process has failed it into retry,
 * its retry delay ended. The job is handed out again as when the time has passed, by the same passes.
 *
 * With `supervisor` (a running pg-boss of the test's process), that pass is run at once, its queue's claim on the
 * pass aged as well, instead of awaited from the next process whose timer comes round (up to the 10 s interval).
 */
export async function jobTimeLapsed(
  db: Kysely<Schema>,
  jobId: string,
  options: { supervisor?: PgBoss } = {},
): Promise<void> {
  const lapsed = await sql<{ name: string }>`UPDATE recon_queue.job SET heartbeat_on = heartbeat_on - interval '1 hour'
    WHERE id = ${jobId}::uuid AND state = 'active' RETURNING name`.execute(db);
  if (lapsed.rows.length !== 1) throw new Error(`job ${jobId} is not active`);
  if (options.supervisor) {
    const queue = lapsed.rows[0]!.name;
    // The claim that spaces the passes deployment-wide: another process may still win it, and then fails the job.
    await sql`UPDATE recon_queue.queue SET monitor_claim_on = now() - interval '1 hour' WHERE name = ${queue}`.execute(
      db,
    );
    await options.supervisor.supervise(queue);
  }
  // A supervisor pass comes every RECON_JOB_HEARTBEAT_SECONDS (10 here), from whichever process claims it.
  await waitUntil(
    `job ${jobId} failed into retry by a supervisor pass`,
    async () =>
      Number(
        (
          await sql`UPDATE recon_queue.job SET start_after = now()
            WHERE id = ${jobId}::uuid AND state = 'retry'`.execute(db)
        ).numAffectedRows,
      ) === 1,
    { timeoutMs: 60_000 },
  );
}
