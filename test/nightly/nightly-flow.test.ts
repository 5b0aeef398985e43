import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSandbox, type Sandbox } from '@recon/sandbox';
import { insertOrders } from '../reconcile/reconcile-scenario.ts';
import { BACKENDS, createTestDatabase, hasPostgres, type TestDatabase } from '../support/test-database.ts';
import { IDENTIFIER, SECRET, startNightlyHarness, type NightlyHarness } from './nightly-harness.ts';

const DAY = 86_400_000;

describe.each(BACKENDS)('a nightly run end to end on %s', (backend) => {
  const skip = backend === 'postgres' && !hasPostgres;
  let testDb: TestDatabase;
  let sandbox: Sandbox;
  let harness: NightlyHarness;

  beforeAll(async () => {
    if (skip) return;
    testDb = await createTestDatabase(backend);
    sandbox = createSandbox({ identifier: IDENTIFIER, secret: SECRET, seed: 7 });
    const sandboxUrl = await sandbox.listen(0);
    // Every scenario order, booked as paid: the run must ask for each, receive, ingest and judge it.
    await insertOrders(
      testDb.database,
      sandbox.scenario!.orderIds.map((id) => ({
        id,
        amount: 100n,
        status: 'paid' as const,
        createdAt: new Date(Date.now() - DAY),
      })),
    );
    harness = await startNightlyHarness(testDb.database, sandboxUrl, { exportBatchSize: 7, exportCompression: 'gzip' });
  });

  afterAll(async () => {
    await harness?.close();
    await sandbox?.close();
    await testDb?.drop();
  });

  it.skipIf(skip)(
    "asks for every batch, ingests what the service delivers and reconciles the run's orders",
    async () => {
      const orderIds = sandbox.scenario!.orderIds;
      const runId = await harness.start('2026-11-23');
      expect(await harness.settled(runId)).toBe('reconciled');

      const db = testDb.database.db;
      const run = await db
        .selectFrom('recon.nightly_runs')
        .selectAll()
        .where('nightly_run_id', '=', runId)
        .executeTakeFirstOrThrow();
      expect(run.orders).toBe(orderIds.length);
      expect(run.batches).toBe(Math.ceil(orderIds.length / 7));
      const requests = await db
        .selectFrom('recon.export_requests')
        .select(['batch', 'attempt', 'state', 'order_ids'])
        .where('nightly_run_id', '=', runId)
        .orderBy('batch')
        .execute();
      expect(requests.map((r) => [r.batch, r.attempt, r.state])).toEqual(
        requests.map((_, i) => [i + 1, 1, 'ingested']),
      );
      expect(requests.flatMap((r) => r.order_ids).sort()).toEqual([...orderIds].sort());

      // Every transaction the sandbox holds for these orders landed, with lineage to the delivery's file.
      const expected = sandbox.store
        .all()
        .filter((t) => orderIds.includes(t.orderId))
        .map((t) => t.transactionId)
        .sort();
      const stored = await db
        .selectFrom('recon.transactions as t')
        .innerJoin('recon.deliveries as d', 'd.file_id', 't.file_id')
        .select('t.transaction_id')
        .execute();
      expect(stored.map((row) => row.transaction_id).sort()).toEqual(expected);

      // One verdict per order, in the reconciliation run the nightly run names, as of the run's start.
      const verdicts = await sql<{
        count: number;
        as_of: Date;
      }>`SELECT count(*)::integer AS count, min(r.as_of) AS as_of
      FROM recon.verdicts v JOIN recon.reconciliation_runs r USING (run_id) WHERE v.run_id = ${run.reconciliation_run_id}::bigint`.execute(
        db,
      );
      expect(verdicts.rows[0]!.count).toBe(orderIds.length);
      expect(new Date(verdicts.rows[0]!.as_of).getTime()).toBe(new Date(run.as_of).getTime());
    },
  );

  it.skipIf(skip)('a second start for the same date attaches to the run instead of making another', async () => {
    const first = await harness.start('2026-11-24');
    const second = await harness.start('2026-11-24');
    expect(second).toBe(first);
    await harness.settled(first);
    const { count } = await testDb.database.db
      .selectFrom('recon.nightly_runs')
      .select((eb) => eb.fn.countAll<number>().as('count'))
      .where('run_date', '=', sql<Date>`'2026-11-24'::date`)
      .executeTakeFirstOrThrow();
    expect(Number(count)).toBe(1);
  });
});
