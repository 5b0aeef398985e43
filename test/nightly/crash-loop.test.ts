import { readdir } from 'node:fs/promises';
import os from 'node:os';
import { sql, type Kysely } from 'kysely';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Schema } from '../../src/db/schema.ts';
import { WORKER_DIED } from '../../src/nightly/delivery-attempts.ts';
import { triggerNightlyRun } from '../../src/nightly/nightly-scheduler.ts';
import { advanceSender } from '../../pipelines/nightly/nightly-worker.ts';
import { QUEUES } from '../../src/queue/job-queue.ts';
import { createSandbox, type Sandbox } from '@recon/sandbox';
import { startRecon, type RunningRecon } from '../cli/run-recon.ts';
import { DAY, insertOrders } from '../reconcile/reconcile-scenario.ts';
import {
  backendExists,
  holdTransaction,
  lockWaiters,
  withApplicationName,
  type HeldTransaction,
} from '../support/held-transaction.ts';
import { createTestDatabase, hasPostgres, type TestDatabase } from '../support/test-database.ts';
import { parseLogRecords, untilLogged } from '../support/log-records.ts';
import { waitUntil } from '../support/wait-until.ts';
import { jobTimeLapsed } from './dead-worker-job.ts';
import { startQueueReceiver, type QueueReceiver } from './queue-receiver.ts';

const IDENTIFIER = 'CRASHLOOP';
const SECRET = 'crash-loop-secret';
/** pg-boss's shortest heartbeat, and so the supervisors' pace; jobTimeLapsed spares the test its waits. */
const HEARTBEAT_SECONDS = 10;

/**
 * A delivery whose ingest kills its worker, again and again (the zip of a million entries did, before archives
 * were bounded). Here real `recon worker` processes are killed with SIGKILL in the middle of its ingest, caught
 * there deterministically by a lock the test holds on recon.transactions. PostgreSQL only: several processes.
 */
describe.skipIf(!hasPostgres)('a delivery that kills its workers (PostgreSQL only)', () => {
  let testDb: TestDatabase;
  let db: Kysely<Schema>;
  let sandbox: Sandbox;
  let receiving: QueueReceiver;
  let env: Record<string, string>;
  const workers: RunningRecon[] = [];
  let held: HeldTransaction | undefined;

  /** Each test a database, a sandbox and a receiver of its own: the same export twice would be a duplicate file. */
  beforeEach(async () => {
    testDb = await createTestDatabase('postgres');
    db = testDb.database.db;
    sandbox = createSandbox({ identifier: IDENTIFIER, secret: SECRET, seed: 5, seedOrders: 30 });
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
      RECON_EXPORT_BATCH_SIZE: '1000',
      RECON_JOB_HEARTBEAT_SECONDS: String(HEARTBEAT_SECONDS),
      // A job handed on from a killed worker is taken at the next poll: pg-boss's floor, not the 2 s default.
      RECON_JOB_POLL_MS: '500',
    };
  });
  afterEach(async () => {
    for (const worker of workers.splice(0)) {
      worker.child.kill('SIGKILL');
      await worker.done;
    }
    await held?.release();
    held = undefined;
    await receiving?.close();
    await sandbox?.close();
    await testDb?.drop();
  });

  const worker = (name: string) => {
    const started = startRecon(['worker'], {
      ...env,
      DATABASE_URL: withApplicationName(testDb.env.DATABASE_URL!, name),
    });
    workers.push(started);
    return started;
  };
  const holdMerges = async () => {
    held = await holdTransaction(testDb.env.DATABASE_URL!, [
      'LOCK TABLE recon.transactions IN SHARE ROW EXCLUSIVE MODE',
    ]);
  };
  const merging = (name: string) =>
    waitUntil(
      `${name} merging into recon.transactions`,
      async () =>
        (await lockWaiters(db)).find(
          (waiter) => waiter.applicationName === name && waiter.relation === 'recon.transactions',
        ),
      { timeoutMs: 60_000 },
    );
  /**
   * SIGKILL, then the killed worker's session is let go: it waits for the test's lock and learns its client is gone
   * only once it gets it, so the lock is released until the session has rolled back, then held again.
   */
  const kill = async (running: RunningRecon, backendPid: number) => {
    running.child.kill('SIGKILL');
    await running.done;
    await held!.release();
    await waitUntil("the killed worker's session gone", async () => !(await backendExists(db, backendPid)));
    await holdMerges();
  };
  const tempFoldersOf = async (pid: number) =>
    (await readdir(os.tmpdir())).filter((name) => name.startsWith(`recon-${pid}-`));
  const activeJobOf = async (deliveryId: string) =>
    (
      await sql<{ id: string }>`SELECT id FROM recon_queue.job
    WHERE name = ${QUEUES.ingestDelivery} AND data->>'deliveryId' = ${deliveryId} AND state = 'active'`.execute(db)
    ).rows[0]!.id;
  const jobsOf = async (deliveryId: string) =>
    (
      await sql<{ state: string }>`SELECT state FROM recon_queue.job
    WHERE name = ${QUEUES.ingestDelivery} AND data->>'deliveryId' = ${deliveryId} ORDER BY created_on`.execute(db)
    ).rows.map((job) => job.state);

  it(
    'quarantines the delivery after its second death, asks for its batch again, and the run reconciles',
    { timeout: 240_000 },
    async () => {
      await holdMerges();
      const { nightlyRunId } = await triggerNightlyRun(db, '2026-11-28', new Date(), advanceSender(receiving.boss));

      const first = worker('crash-1');
      const firstSession = await merging('crash-1');
      const [delivery] = await db.selectFrom('recon.deliveries').select('delivery_id').execute();
      const deliveryId = String(delivery!.delivery_id);
      // What it spooled for its ingest stays behind when it is killed.
      expect(await tempFoldersOf(first.child.pid!)).toHaveLength(1);
      const job = await activeJobOf(deliveryId);
      await kill(first, firstSession.pid);

      // The next worker clears the dead one's temp folder as it starts, takes the job once its heartbeat lapsed, and
      // dies in the same place.
      const second = worker('crash-2');
      await jobTimeLapsed(db, job, { supervisor: receiving.boss });
      await untilLogged(second, 'recon worker working', (record) => record.msg === 'working');
      expect(await tempFoldersOf(first.child.pid!)).toEqual([]);
      const secondSession = await merging('crash-2');
      expect(
        await db
          .selectFrom('recon.deliveries')
          .select(['attempts', 'attempt_open', 'failure'])
          .where('delivery_id', '=', deliveryId)
          .executeTakeFirstOrThrow(),
      ).toEqual({ attempts: 2, attempt_open: true, failure: WORKER_DIED });
      await kill(second, secondSession.pid);

      const third = worker('crash-3');
      await jobTimeLapsed(db, job, { supervisor: receiving.boss });
      const quarantine = await untilLogged(
        third,
        'the delivery quarantined',
        (record) => record.msg === 'delivery quarantined; its batch is asked for again',
        { timeoutMs: 90_000 },
      );
      expect(quarantine).toMatchObject({
        level: 'error',
        delivery: deliveryId,
        reason: `quarantined after 2 attempts: ${WORKER_DIED}, twice`,
      });
      expect(await tempFoldersOf(second.child.pid!)).toEqual([]);
      const quarantined = await db
        .selectFrom('recon.deliveries')
        .select(['state', 'quarantined_at'])
        .where('delivery_id', '=', deliveryId)
        .executeTakeFirstOrThrow();
      expect(quarantined.state).toBe('failed');
      expect(quarantined.quarantined_at).not.toBeNull();

      // The batch is asked for again; its new delivery loads once the test lets merges through.
      await waitUntil(
        'the batch asked for again',
        async () =>
          (await db
            .selectFrom('recon.export_requests')
            .select('attempt')
            .where('nightly_run_id', '=', nightlyRunId)
            .where('attempt', '=', 2)
            .executeTakeFirst()) !== undefined,
      );
      await held!.release();
      held = undefined;
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
      const requests = await db
        .selectFrom('recon.export_requests')
        .select(['attempt', 'state'])
        .where('nightly_run_id', '=', nightlyRunId)
        .orderBy('attempt')
        .execute();
      expect(requests).toEqual([
        { attempt: 1, state: 'failed' },
        { attempt: 2, state: 'ingested' },
      ]);
      // Never picked up again: its job ended, and no sweep gives it another.
      expect((await jobsOf(deliveryId)).every((state) => state === 'completed' || state === 'failed')).toBe(true);
      expect(
        await db
          .selectFrom('recon.deliveries')
          .select('state')
          .where('delivery_id', '=', deliveryId)
          .executeTakeFirstOrThrow(),
      ).toEqual({ state: 'failed' });
    },
  );

  it(
    'gives a delivery a live job holds no second job, however old it is, when another worker sweeps',
    { timeout: 120_000 },
    async () => {
      await holdMerges();
      const { nightlyRunId } = await triggerNightlyRun(db, '2026-11-29', new Date(), advanceSender(receiving.boss));
      worker('holder');
      await merging('holder');
      const delivery = await db
        .selectFrom('recon.deliveries as d')
        .innerJoin('recon.export_requests as r', 'r.request_id', 'd.request_id')
        .select('d.delivery_id')
        .where('r.nightly_run_id', '=', nightlyRunId)
        .executeTakeFirstOrThrow();
      const deliveryId = String(delivery.delivery_id);
      // Long past the sweep's grace: only the live job keeps the sweep from taking it.
      await db
        .updateTable('recon.deliveries')
        .set({ received_at: new Date(Date.now() - 3600_000) })
        .where('delivery_id', '=', deliveryId)
        .execute();

      const sweeper = worker('sweeper');
      await untilLogged(sweeper, 'the second worker started (its start sweeps)', (record) => record.msg === 'working');
      expect(parseLogRecords(sweeper.stdoutSoFar()).filter((record) => Number(record.deliveries ?? 0) > 0)).toEqual([]);
      expect(await jobsOf(deliveryId)).toEqual(['active']);
      expect(
        (await lockWaiters(db))
          .filter((waiter) => waiter.relation === 'recon.transactions')
          .map((waiter) => waiter.applicationName),
      ).toEqual(['holder']);
    },
  );
});
