import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { dateInZone } from '@recon/protocol';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { importOrderFiles } from '../../pipelines/import-orders.ts';
import { createPaymentClient } from '../../src/client/payment-client.ts';
import { loadConfig } from '../../src/config/config.ts';
import { createMetricsRegistry } from '../../src/metrics/metrics-registry.ts';
import { findNightlyRun } from '../../src/nightly/nightly-run.ts';
import { triggerNightlyRun } from '../../src/nightly/nightly-scheduler.ts';
import { advanceSender, startNightlyWorker } from '../../pipelines/nightly/nightly-worker.ts';
import { startReconServices, type ReconServices } from '../../pipelines/nightly/recon-services.ts';
import { createSandbox, formatOrdersCsv, scenarioOrders, type Sandbox } from '@recon/sandbox';
import { BACKENDS, createTestDatabase, hasPostgres, type TestDatabase } from '../support/test-database.ts';
import { waitUntil } from '../support/wait-until.ts';
import { IDENTIFIER, SECRET } from './nightly-harness.ts';

/**
 * Money whose order the merchant's books lack: the service exports by ORDERID, so a nightly run finds it only by the
 * ORDERID its notifications gave. The seeded scenario leaves one order out of its csv and notifies every operation
 * to recon's receiver, as the service does; the run must judge that ORDERID unknown_order, its money in the bridge.
 */
describe.each(BACKENDS)('money without an order, found by a nightly run on %s', (backend) => {
  const skip = backend === 'postgres' && !hasPostgres;
  let testDb: TestDatabase;
  let services: ReconServices;
  let sandbox: Sandbox;
  let dir: string;

  beforeAll(async () => {
    if (skip) return;
    testDb = await createTestDatabase(backend);
    const config = loadConfig({});
    services = await startReconServices({
      database: testDb.database,
      heartbeatSeconds: 10,
      receiver: {
        host: '127.0.0.1',
        port: 0,
        accounts: [{ identifier: IDENTIFIER, secret: SECRET }],
        maxFileBytes: config.limits.maxFileBytes,
        metrics: createMetricsRegistry(),
      },
    });
    sandbox = createSandbox({
      identifier: IDENTIFIER,
      secret: SECRET,
      seed: 9,
      seedOrders: 40,
      notifyUrl: `${services.receiver!.url}/notify`,
    });
    await sandbox.notifications.idle();
    dir = await mkdtemp(path.join(os.tmpdir(), 'recon-unknown-order-'));
  });
  afterAll(async () => {
    await services?.close({ graceful: false });
    await sandbox?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
    await testDb?.drop();
  });

  it.skipIf(skip)(
    'asks about the ORDERID its notifications gave and judges it unknown_order, its money in the bridge',
    async () => {
      const { database } = testDb;
      const config = loadConfig({});
      const asOf = sandbox.clock.now();
      const orders = scenarioOrders(sandbox.store, sandbox.scenario!, asOf);
      const leftOut = orders.filter((order) => order.order === undefined);
      expect(leftOut).toHaveLength(1);
      const ordersFile = path.join(dir, 'orders.csv');
      await writeFile(ordersFile, formatOrdersCsv(orders));
      expect((await importOrderFiles(database, [ordersFile], { limits: config.limits }))[0]!.status).toBe('loaded');

      const worker = await startNightlyWorker(services.boss, database, {
        accounts: [
          {
            identifier: IDENTIFIER,
            client: createPaymentClient({
              baseUrl: await sandbox.listen(0),
              identifier: IDENTIFIER,
              secret: SECRET,
              timeoutMs: 5_000,
              retry: { attempts: 2, baseDelayMs: 10 },
            }),
          },
        ],
        callbackBaseUrl: services.callbackBaseUrl,
        nightly: config.nightly,
        reconcile: config.reconcile,
        ingest: { timezone: 'UTC', limits: config.limits },
        pollingIntervalSeconds: 0.5,
      });
      try {
        const { nightlyRunId } = await triggerNightlyRun(
          database.db,
          dateInZone(asOf, 'UTC'),
          asOf,
          advanceSender(services.boss),
        );
        const run = await waitUntil(
          'the run reconciled',
          async () => {
            const current = await findNightlyRun(database.db, nightlyRunId);
            return current?.state === 'reconciled' || current?.state === 'failed' ? current : undefined;
          },
          { timeoutMs: 60_000 },
        );
        expect(run.state).toBe('reconciled');

        const orderIds = orders.map((order) => order.orderId);
        const judged = scenarioOrders(sandbox.store, sandbox.scenario!, asOf, { scope: { kind: 'orders', orderIds } });
        const { rows } = await sql<{ order_id: string; status: string; settled_minor: string; run_id: string }>`
        SELECT v.order_id, v.status, v.settled_minor::text, v.run_id::text FROM recon.verdicts v
        JOIN recon.nightly_runs n ON n.reconciliation_run_id = v.run_id WHERE n.nightly_run_id = ${nightlyRunId}::bigint`.execute(
          database.db,
        );
        expect(new Map(rows.map((row) => [row.order_id, row.status]))).toEqual(
          new Map(judged.map((order) => [order.orderId, order.expected])),
        );
        const unknown = rows.find((row) => row.order_id === leftOut[0]!.orderId)!;
        expect(unknown.status).toBe('unknown_order');
        expect(BigInt(unknown.settled_minor)).toBeGreaterThan(0n);
        const bridge = await database.db
          .selectFrom('recon.run_totals')
          .select(['currency', 'unknown_orders'])
          .where('run_id', '=', unknown.run_id)
          .execute();
        expect(bridge.reduce((sum, row) => sum + row.unknown_orders, 0)).toBe(1);
      } finally {
        await worker.stop();
      }
    },
  );
});
