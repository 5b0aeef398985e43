import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backfill } from '../../pipelines/backfill.ts';
import { importOrderFiles } from '../../pipelines/import-orders.ts';
import { createPaymentClient } from '../../src/client/payment-client.ts';
import { loadConfig } from '../../src/config/config.ts';
import { verifyHash } from '@recon/protocol';
import {
  createSandbox,
  createSandboxClock,
  formatOrdersCsv,
  scenarioOrders,
  type Sandbox,
  type ScenarioOrder,
} from '@recon/sandbox';
import { IDENTIFIER, SECRET, startTestReceiver, type TestReceiver } from '../receive/receiver-harness.ts';
import { BACKENDS, createTestDatabase, hasPostgres, type TestDatabase } from '../support/test-database.ts';

/**
 * The seeded scenario notifies its operations as the service would have, to recon's receiver: the order the
 * merchant's csv leaves out, which no export asked for by ORDERID can show, is found in the notifications stored
 * with a valid HASH, and a run whose scope holds its ORDERID judges it unknown_order, as the scenario's oracle says.
 */
const SEEDED_AT = new Date('2026-11-02T06:00:00Z');

describe.each(BACKENDS)("the seeded scenario notifies recon's receiver, on %s", (backend) => {
  const skip = backend === 'postgres' && !hasPostgres;
  let testDb: TestDatabase;
  let receiver: TestReceiver;
  let sandbox: Sandbox;
  let workDir: string;
  let orders: ScenarioOrder[];
  let leftOut: string;

  beforeAll(async () => {
    if (skip) return;
    testDb = await createTestDatabase(backend);
    receiver = await startTestReceiver(testDb.database);
    sandbox = createSandbox({
      identifier: IDENTIFIER,
      secret: SECRET,
      seed: 11,
      seedOrders: 60,
      clock: createSandboxClock({ start: SEEDED_AT, ticking: false }),
      notifyUrl: `${receiver.url}/notify`,
    });
    await sandbox.notifications.idle();
    orders = scenarioOrders(sandbox.store, sandbox.scenario!, SEEDED_AT);
    leftOut = orders.find((order) => order.discrepancy === 'left-out')!.orderId;
    workDir = await mkdtemp(path.join(os.tmpdir(), 'recon-scenario-notifications-'));
    const ordersFile = path.join(workDir, 'orders.csv');
    await writeFile(ordersFile, formatOrdersCsv(orders));
    const [imported] = await importOrderFiles(testDb.database, [ordersFile], { limits: loadConfig({}).limits });
    expect(imported!.status).toBe('loaded');
  });
  afterAll(async () => {
    await sandbox?.close();
    await receiver?.close();
    await testDb?.drop();
    if (workDir) await rm(workDir, { recursive: true, force: true });
  });

  const storedNotifications = () =>
    testDb.database.db
      .selectFrom('recon.notifications')
      .select(['transaction_id', 'order_id', 'exec_code', 'amount_minor', 'hash_valid', 'params'])
      .orderBy('notification_id')
      .execute();

  it.skipIf(skip)(
    "stores every notification of the scenario, each with a valid HASH, the left-out order's among them",
    async () => {
      const deliveries = sandbox.notifications.deliveries();
      expect(deliveries.length).toBeGreaterThan(60);
      expect(deliveries.filter((delivery) => delivery.state !== 'delivered')).toEqual([]);
      const stored = await storedNotifications();
      expect(stored).toHaveLength(deliveries.length);
      expect(stored.filter((row) => !row.hash_valid)).toEqual([]);
      for (const row of stored) expect(verifyHash(SECRET, row.params)).toBe(true);

      // Each succeeded operation of the left-out order, notified with its EXECCODE and AMOUNT.
      const succeeded = sandbox.store.byOrderId(leftOut).filter((transaction) => transaction.execCode === '0000');
      expect(succeeded.length).toBeGreaterThan(0);
      const ofLeftOut = stored.filter((row) => row.order_id === leftOut && row.exec_code === '0000');
      expect(ofLeftOut.map((row) => [row.transaction_id, String(row.amount_minor)]).toSorted()).toEqual(
        succeeded.map((transaction) => [transaction.transactionId, String(transaction.amount)]).toSorted(),
      );
    },
  );

  it.skipIf(skip)(
    'lets a run find the left-out ORDERID among the notifications and judge it unknown_order, every other verdict as before',
    async () => {
      const notified = await testDb.database.db
        .selectFrom('recon.notifications as n')
        .select('n.order_id')
        .distinct()
        .where('n.hash_valid', '=', true)
        .where(({ not, exists, selectFrom }) =>
          not(exists(selectFrom('recon.orders as o').select('o.order_id').whereRef('o.order_id', '=', 'n.order_id'))),
        )
        .execute();
      expect(notified.map((row) => row.order_id)).toEqual([leftOut]);

      // A run over the merchant's orders and that ORDERID, as a nightly run that asks about notified ORDERIDs makes.
      const orderIds = [...orders.filter((order) => order.order).map((order) => order.orderId), leftOut];
      const client = createPaymentClient({
        baseUrl: await sandbox.listen(0),
        identifier: IDENTIFIER,
        secret: SECRET,
        timeoutMs: 5_000,
        retry: { attempts: 1, baseDelayMs: 10 },
      });
      const result = await backfill(testDb.database, [{ identifier: IDENTIFIER, client }], {
        orderIds,
        batchSize: 200,
        toleranceMinor: 0n,
        graceHours: 24,
        now: () => SEEDED_AT,
      });
      const expected = scenarioOrders(sandbox.store, sandbox.scenario!, SEEDED_AT, {
        scope: { kind: 'orders', orderIds },
      });
      expect(new Map(result.verdicts.map((verdict) => [verdict.orderId, verdict.status]))).toEqual(
        new Map(expected.map((order) => [order.orderId, order.expected])),
      );
      expect(result.verdicts.find((verdict) => verdict.orderId === leftOut)!.status).toBe('unknown_order');
      // The notifications agree with the export: none makes a conflict.
      expect(result.run.counts.notification_conflict).toBe(0);
    },
  );
});
