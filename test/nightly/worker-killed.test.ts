import { sql, type Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ingestFiles } from '../../pipelines/ingest-files.ts';
import { loadConfig } from '../../src/config/config.ts';
import type { Schema } from '../../src/db/schema.ts';
import { triggerNightlyRun } from '../../src/nightly/nightly-scheduler.ts';
import { advanceSender } from '../../pipelines/nightly/nightly-worker.ts';
import { QUEUES } from '../../src/queue/job-queue.ts';
import { spoolDelivery } from '../../src/receive/spool-delivery.ts';
import { createSandbox, type Sandbox } from '@recon/sandbox';
import { startRecon } from '../cli/run-recon.ts';
import { DAY, insertOrders } from '../reconcile/reconcile-scenario.ts';
import { backendExists, holdTransaction, lockWaiters, withApplicationName } from '../support/held-transaction.ts';
import { createTestDatabase, hasPostgres, type TestDatabase } from '../support/test-database.ts';
import { waitUntil } from '../support/wait-until.ts';
import { jobTimeLapsed } from './dead-worker-job.ts';
import { startQueueReceiver, type QueueReceiver } from './queue-receiver.ts';

const IDENTIFIER = 'KILLED';
const SECRET = 'killed-secret';
/** pg-boss's shortest heartbeat, and so the supervisors' pace; jobTimeLapsed spares the test its waits. */
const HEARTBEAT_SECONDS = 10;

/**
 * kill -9 of a `recon worker` in the middle of an ingest: nothing of it is committed, its job is handed out again
 * once its heartbeat lapses, and the rows end up those of an undisturbed ingest of the same delivery. PostgreSQL
 * only: it takes several processes on one database. The worker is caught mid-transaction deterministically: the
 * test holds a lock on recon.transactions that the ingest's merge (after its COPY) must wait for.
 */
describe.skipIf(!hasPostgres)('a worker killed mid-ingest (PostgreSQL only)', () => {
  let testDb: TestDatabase;
  let reference: TestDatabase;
  let sandbox: Sandbox;
  let receiving: QueueReceiver;
  let env: Record<string, string>;

  beforeAll(async () => {
    [testDb, reference] = await Promise.all([createTestDatabase('postgres'), createTestDatabase('postgres')]);
    sandbox = createSandbox({ identifier: IDENTIFIER, secret: SECRET, seed: 7 });
    const sandboxUrl = await sandbox.listen(0);
    await insertOrders(
      testDb.database,
      sandbox.scenario!.orderIds.map((id) => ({
        id,
        amount: 100n,
        status: 'paid' as const,
        createdAt: new Date(Date.now() - DAY),
      })),
    );
    receiving = await startQueueReceiver(testDb.database, { secret: SECRET, heartbeatSeconds: HEARTBEAT_SECONDS });
    env = {
      ...testDb.env,
      RECON_SERVICE_URL: sandboxUrl,
      RECON_IDENTIFIER: IDENTIFIER,
      RECON_SECRET: SECRET,
      RECON_CALLBACK_BASE_URL: receiving.callbackBaseUrl,
      // One batch, so one delivery and one ingest job.
      RECON_EXPORT_BATCH_SIZE: '1000',
      RECON_JOB_HEARTBEAT_SECONDS: String(HEARTBEAT_SECONDS),
      // A job handed on from a killed worker is taken at the next poll: pg-boss's floor, not the 2 s default.
      RECON_JOB_POLL_MS: '500',
    };
  });

  afterAll(async () => {
    await receiving?.close();
    await sandbox?.close();
    await testDb?.drop();
    await reference?.drop();
  });

  const worker = (name: string) =>
    startRecon(['worker'], { ...env, DATABASE_URL: withApplicationName(testDb.env.DATABASE_URL!, name) });

  it(
    'leaves nothing partial; the job runs again in another worker to the rows of an undisturbed ingest',
    { timeout: 120_000 },
    async () => {
      const db = testDb.database.db;
      const held = await holdTransaction(testDb.env.DATABASE_URL!, [
        'LOCK TABLE recon.transactions IN SHARE ROW EXCLUSIVE MODE',
      ]);
      let first;
      let merging;
      try {
        const { nightlyRunId } = await triggerNightlyRun(db, '2026-11-27', new Date(), advanceSender(receiving.boss));
        first = worker('worker-1');
        // The run's request is sent, the sandbox delivers, the receiver stores: the worker's ingest has COPYed the
        // rows into its staging table and now waits to merge them.
        merging = await waitUntil(
          'the first worker merging into recon.transactions',
          async () =>
            (await lockWaiters(db)).find(
              (waiter) => waiter.applicationName === 'worker-1' && waiter.relation === 'recon.transactions',
            ),
          { timeoutMs: 30_000 },
        );
        const [job] = await ingestJobs(db);
        expect(job).toMatchObject({ state: 'active', retry_count: 0 });
        first.child.kill('SIGKILL');
        await first.done;
        expect(first.child.signalCode).toBe('SIGKILL');
        expect(await committed(db)).toEqual({ files: [], transactions: 0, deliveries: ['received'] });

        await held.release();
        // The killed worker's session ends when PostgreSQL next hears from its client: its merge then rolls back.
        await waitUntil("the killed worker's session gone", async () => !(await backendExists(db, merging!.pid)));
        expect(await committed(db)).toEqual({ files: [], transactions: 0, deliveries: ['received'] });

        const second = worker('worker-2');
        try {
          await jobTimeLapsed(db, job!.id);
          await waitUntil(
            'the run reconciled',
            async () =>
              (
                await db
                  .selectFrom('recon.nightly_runs')
                  .select('state')
                  .where('nightly_run_id', '=', nightlyRunId)
                  .executeTakeFirst()
              )?.state === 'reconciled',
            { timeoutMs: 60_000 },
          );
          // The killed worker's job itself, failed once its heartbeat lapsed, is taken again and completes.
          await waitUntil(
            "the killed worker's job completed",
            async () => (await ingestJobs(db)).find((row) => row.id === job!.id && row.state === 'completed'),
            { timeoutMs: 60_000 },
          );
          expect((await ingestJobs(db)).find((row) => row.id === job!.id)).toMatchObject({ retry_count: 1 });
        } finally {
          second.child.kill('SIGTERM');
        }
        expect((await second.done).code).toBe(0);
      } finally {
        first?.child.kill('SIGKILL');
        await held.release();
      }

      // One file, loaded whole, once: the killed attempt left no row, the job's second run found the bytes loaded.
      expect(await committed(db)).toMatchObject({
        files: [{ status: 'loaded', finished: true }],
        deliveries: ['ingested'],
      });
      // The reference: the same delivered bytes, ingested once, undisturbed, into a database of their own.
      const { delivery_id } = await db.selectFrom('recon.deliveries').select('delivery_id').executeTakeFirstOrThrow();
      const spooled = await spoolDelivery(db, String(delivery_id));
      try {
        const [result] = await ingestFiles(reference.database, [spooled.path], {
          timezone: 'UTC',
          limits: loadConfig({}).limits,
        });
        expect(result!.status).toBe('loaded');
      } finally {
        await spooled.remove();
      }
      const rows = await transactionRows(db);
      expect(rows).toEqual(await transactionRows(reference.database.db));
      const orderIds = new Set(sandbox.scenario!.orderIds);
      expect(rows.map((row) => row.transaction_id)).toEqual(
        sandbox.store
          .all()
          .filter((t) => orderIds.has(t.orderId))
          .map((t) => t.transactionId)
          .sort(),
      );
    },
  );
});

async function ingestJobs(db: Kysely<Schema>) {
  const { rows } = await sql<{
    id: string;
    state: string;
    retry_count: number;
  }>`SELECT id, state, retry_count FROM recon_queue.job
    WHERE name = ${QUEUES.ingestDelivery} ORDER BY created_on`.execute(db);
  return rows;
}

/** What is committed of the ingest: files, transactions, deliveries' states. */
async function committed(db: Kysely<Schema>) {
  const files = await db.selectFrom('recon.files').select(['status', 'finished_at']).execute();
  const { rows } = await sql<{ count: number }>`SELECT count(*)::integer AS count FROM recon.transactions`.execute(db);
  const deliveries = await db.selectFrom('recon.deliveries').select('state').execute();
  return {
    files: files.map((file) => ({ status: file.status, finished: file.finished_at !== null })),
    transactions: rows[0]!.count,
    deliveries: deliveries.map((delivery) => delivery.state),
  };
}

/** Every column of every transaction but its lineage (file_id) and write time. */
async function transactionRows(db: Kysely<Schema>) {
  const { rows } = await sql<
    Record<string, unknown> & { transaction_id: string }
  >`SELECT * FROM recon.transactions ORDER BY transaction_id`.execute(db);
  return rows.map(({ file_id: _file, updated_at: _updated, ...row }) => row);
}
