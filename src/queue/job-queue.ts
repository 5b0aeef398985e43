import { sql } from 'kysely';
import { fromPglite, PgBoss } from 'pg-boss';
import type { Database } from '../db/database.ts';

/** The work between receiving and reconciling, each a pg-boss queue in the `recon_queue` schema. */
export const QUEUES = {
  /**
   * `{ deliveryId }`: a stored export delivery to ingest, sent with the delivery id as its singleton key. The queue
   * is exclusive: one job per delivery at most, waiting or active, so a delivery is ingested by one job at a time and
   * a sweep or a repeated send while a job holds it adds nothing.
   */
  ingestDelivery: 'recon-delivery-ingest',
  /** `{ nightlyRunId }`: move a nightly run on (request, check for timeouts, reconcile). */
  advanceNightlyRun: 'recon-advance-nightly-run',
} as const;

/** The ingest queue of earlier versions, which let one delivery have several jobs at once: removed at start. */
const LEGACY_INGEST_QUEUE = 'recon-ingest-delivery';

/** pg-boss's tables live in this schema of recon's database. */
export const QUEUE_SCHEMA = 'recon_queue';

export interface JobQueueOptions {
  /**
   * RECON_JOB_HEARTBEAT_SECONDS: a job whose worker stopped heartbeating (killed) is failed and handed to another
   * worker once this many seconds have passed without a heartbeat (pg-boss's minimum is 10). Every process of a
   * deployment should use the same value: the latest to start sets it on the queues.
   */
  readonly heartbeatSeconds: number;
  /** Each error pg-boss emits: an Error, or a plain copy of one's fields (its stack among them) with the queue's. */
  readonly onError?: (error: unknown) => void;
}

/**
 * How long a job may run before pg-boss takes it for dead and hands it to another worker. A dead worker is found by
 * its heartbeat within seconds; this only bounds a live one, and pg-boss's 15 minutes would hand a large ingest or
 * a million-order reconciliation to a second worker while the first is still at it.
 */
const JOB_EXPIRY_SECONDS = 6 * 3600;

/** The advisory lock that serializes opening the queue between processes (oneProcessAtATime says why). */
export const QUEUE_INSTALL_LOCK = 0x7265636f6e71; // "reconq"

/**
 * pg-boss on recon's own database, through the handle every query uses (on PostgreSQL its own SQL goes through
 * rawQuery, as it sends scripts Kysely's prepared statements refuse; on PGlite through pg-boss's PGlite adapter
 * on the same instance): one way to open the database, PostgreSQL or PGlite.
 * Jobs are rows, so an accepted delivery's job survives any crash, and a job whose worker died is handed out
 * again (heartbeats), to run again to the same rows.
 */
export async function openJobQueue(database: Database, options: JobQueueOptions): Promise<PgBoss> {
  const { heartbeatSeconds } = options;
  const boss = new PgBoss({
    // On PGlite, pg-boss's own adapter: it rolls back a script that failed half-way, which would otherwise leave
    // the one connection inside an aborted transaction for every later statement.
    ...(database.pglite
      ? { db: fromPglite(database.pglite), backend: 'pglite' as const }
      : { db: { executeSql: (text: string, values?: unknown[]) => database.rawQuery(text, values) } }),
    schema: QUEUE_SCHEMA,
    // recon's scheduler is node-cron with one run per slot by the database (nightly-scheduler.ts); pg-boss's own cron
    // would be a second source of runs.
    schedule: false,
    // The supervisor is what fails a job whose heartbeat lapsed; at its default pace (60 s) a killed worker's
    // job would wait up to a minute more than the heartbeat before another worker gets it.
    superviseIntervalSeconds: heartbeatSeconds,
    monitorIntervalSeconds: heartbeatSeconds,
  });
  boss.on('error', (error: unknown) => options.onError?.(error));
  try {
    await oneProcessAtATime(database, () => installQueues(boss, heartbeatSeconds));
  } catch (error) {
    // A half-started queue keeps polling a database its caller is about to close: stop it before failing.
    await boss.stop({ graceful: false, close: false }).catch(() => {});
    throw error;
  }
  return boss;
}

async function installQueues(boss: PgBoss, heartbeatSeconds: number): Promise<void> {
  await boss.start();
  if (await boss.getQueue(LEGACY_INGEST_QUEUE)) await boss.deleteQueue(LEGACY_INGEST_QUEUE);
  for (const name of Object.values(QUEUES)) {
    const policy = name === QUEUES.ingestDelivery ? 'exclusive' : 'standard';
    await boss.createQueue(name, {
      policy,
      heartbeatSeconds,
      expireInSeconds: JOB_EXPIRY_SECONDS,
      retryLimit: 5,
      retryDelay: 5,
      retryBackoff: true,
    });
    // createQueue leaves an existing queue as it is: a changed setting would otherwise never apply.
    const queue = await boss.getQueue(name);
    if (queue?.heartbeatSeconds !== heartbeatSeconds) await boss.updateQueue(name, { heartbeatSeconds });
    if (queue?.expireInSeconds !== JOB_EXPIRY_SECONDS)
      await boss.updateQueue(name, { expireInSeconds: JOB_EXPIRY_SECONDS });
  }
}

/**
 * Sends each delivery's ingest job, unless one is already waiting or running for it (see QUEUES.ingestDelivery).
 * Returns how many were sent.
 */
export async function sendIngestJobs(boss: PgBoss, deliveryIds: readonly string[]): Promise<number> {
  if (deliveryIds.length === 0) return 0;
  const jobs = deliveryIds.map((deliveryId) => ({ data: { deliveryId }, singletonKey: deliveryId }));
  return (await boss.insert(QUEUES.ingestDelivery, jobs, { returnId: true }))?.length ?? 0;
}

/**
 * Two processes starting at once on a database without the queue's schema both find it missing and both run
 * pg-boss's install script, whose own guard (an advisory lock inside the script, then a loser's "already exists"
 * taken as success) does not always hold: seen here, now and then one of two or three processes started together
 * failed with `duplicate key value violates unique constraint "pg_namespace_nspname_index"`; and the loser's
 * failed script, even when taken as success, leaves its pooled connection inside the aborted transaction. recon
 * takes a lock of its own first, in a transaction of its own, so a second process looks for the schema only once
 * the first has installed it.
 * PGlite is one process on one connection: nothing to race, and the transaction would hold the only connection.
 */
async function oneProcessAtATime(database: Database, work: () => Promise<void>): Promise<void> {
  if (database.kind !== 'postgres') return work();
  await database.db.transaction().execute(async (trx) => {
    await sql`SELECT pg_advisory_xact_lock(${QUEUE_INSTALL_LOCK})`.execute(trx);
    await work();
  });
}
