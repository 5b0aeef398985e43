import { PgBoss } from 'pg-boss';
import type { Database } from '../db/database.ts';
import { describeError } from '../errors.ts';

/** The work between receiving and reconciling, each a pg-boss queue in the `recon_queue` schema. */
export const QUEUES = {
  /** `{ deliveryId }`: a stored export delivery to ingest. */
  ingestDelivery: 'recon-ingest-delivery',
  /** `{ nightlyRunId }`: move a nightly run on (request, check for timeouts, reconcile). */
  advanceNightlyRun: 'recon-advance-nightly-run',
} as const;

/** pg-boss's tables live in this schema of recon's database. */
export const QUEUE_SCHEMA = 'recon_queue';

export interface JobQueueOptions {
  /** A job whose worker stopped heartbeating (killed) is handed to another worker after this many seconds. */
  readonly heartbeatSeconds?: number;
  readonly onError?: (message: string) => void;
}

/**
 * pg-boss on recon's own database, through the handle every query uses (its own SQL goes through rawQuery, as
 * it sends scripts Kysely's prepared statements refuse): one way to open the database, PostgreSQL or PGlite. Jobs are rows, so an accepted delivery's job survives any crash,
 * and a job whose worker died is handed out again (heartbeats), to run again to the same rows.
 */
export async function openJobQueue(database: Database, options: JobQueueOptions = {}): Promise<PgBoss> {
  const boss = new PgBoss({
    db: { executeSql: (text: string, values?: unknown[]) => database.rawQuery(text, values) },
    schema: QUEUE_SCHEMA,
    // recon's scheduler is node-cron with one run per slot by the database (scheduler.ts); pg-boss's own cron
    // would be a second source of runs.
    schedule: false,
  });
  boss.on('error', (error: unknown) => options.onError?.(`job queue: ${describeError(error)}`));
  await boss.start();
  const heartbeatSeconds = options.heartbeatSeconds ?? 30;
  for (const name of Object.values(QUEUES)) {
    await boss.createQueue(name, { heartbeatSeconds, retryLimit: 5, retryDelay: 5, retryBackoff: true });
  }
  return boss;
}
