import { sql, type Kysely } from 'kysely';
import type { Schema } from '../../src/db/schema.ts';
import { waitUntil } from '../support/wait-until.ts';

/**
 * A killed worker's job, the waits pg-boss counts in real seconds from its row moved to now: its heartbeat made an
 * hour old (pg-boss's shortest is 10 s), then, once a supervisor pass of a running process has failed it into retry,
 * its retry delay ended. The job is handed out again as when the time has passed, by the same passes.
 */
export async function jobTimeLapsed(db: Kysely<Schema>, jobId: string): Promise<void> {
  const lapsed = await sql`UPDATE recon_queue.job SET heartbeat_on = heartbeat_on - interval '1 hour'
    WHERE id = ${jobId}::uuid AND state = 'active'`.execute(db);
  if (Number(lapsed.numAffectedRows) !== 1) throw new Error(`job ${jobId} is not active`);
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
