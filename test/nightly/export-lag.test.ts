import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backfill } from '../../pipelines/backfill.ts';
import { createPaymentClient, type PaymentClient } from '../../src/client/payment-client.ts';
import { createSandbox, createSandboxClock, type Sandbox } from '@recon/sandbox';
import { insertOrders } from '../reconcile/reconcile-scenario.ts';
import { BACKENDS, createTestDatabase, hasPostgres, type TestDatabase } from '../support/test-database.ts';
import { IDENTIFIER, SECRET, startNightlyHarness } from './nightly-harness.ts';

/**
 * Exports lag behind operations (the service's own SDK tests fetch an old TRANSACTIONID "because of ETL delay"):
 * the sandbox leaves transactions younger than an hour out of every export. recon must take that as normal: an
 * order whose payment is not exported yet is pending within the grace period, never missing at the provider, and a
 * backfill right after a payment says the export may lag.
 */
const HOUR = 3_600_000;
const T0 = new Date('2026-11-23T09:00:00Z');

describe.each(BACKENDS)('export lag on %s', (backend) => {
  const skip = backend === 'postgres' && !hasPostgres;
  let testDb: TestDatabase;
  let sandbox: Sandbox;
  let client: PaymentClient;
  let sandboxUrl: string;

  beforeAll(async () => {
    if (skip) return;
    testDb = await createTestDatabase(backend);
    sandbox = createSandbox({
      identifier: IDENTIFIER,
      secret: SECRET,
      exportLagSeconds: 3600,
      clock: createSandboxClock({ start: T0, ticking: false }),
    });
    sandboxUrl = await sandbox.listen(0);
    client = createPaymentClient({
      baseUrl: sandboxUrl,
      identifier: IDENTIFIER,
      secret: SECRET,
      timeoutMs: 5_000,
      retry: { attempts: 1, baseDelayMs: 10 },
    });
  });
  afterAll(async () => {
    await sandbox?.close();
    await testDb?.drop();
  });

  async function pay(orderId: string): Promise<string> {
    const answer = await client.payment({
      ORDERID: orderId,
      AMOUNT: 2500n,
      CLIENTIDENT: 'c1',
      CLIENTEMAIL: 'jane@example.com',
      CLIENTUSERAGENT: 'Mozilla/5.0',
      CLIENTIP: '192.0.2.10',
      DESCRIPTION: 'a lamp',
    });
    expect(sandbox.finishCardholderStep(answer.TRANSACTIONID!, 'validated').ok).toBe(true);
    return answer.TRANSACTIONID!;
  }

  it.skipIf(skip)('a nightly run leaves an order whose payment is not exported yet pending, not missing', async () => {
    const settled = `lag-${backend}-settled`;
    const young = `lag-${backend}-young`;
    await pay(settled);
    sandbox.clock.advance(2 * HOUR);
    const youngPayment = await pay(young);
    const now = sandbox.clock.now();
    await insertOrders(testDb.database, [
      { id: settled, amount: 2500n, status: 'paid', createdAt: T0 },
      { id: young, amount: 2500n, status: 'paid', createdAt: now },
    ]);
    const harness = await startNightlyHarness(testDb.database, sandboxUrl);
    try {
      const runId = await harness.start('2026-11-23', now);
      expect(await harness.settled(runId)).toBe('reconciled');
      const verdicts = await testDb.database.db
        .selectFrom('recon.verdicts as v')
        .innerJoin('recon.nightly_runs as n', 'n.reconciliation_run_id', 'v.run_id')
        .select(['v.order_id', 'v.status'])
        .where('n.nightly_run_id', '=', runId)
        .orderBy('v.order_id')
        .execute();
      expect(verdicts).toEqual([
        { order_id: settled, status: 'matched' },
        { order_id: young, status: 'pending' },
      ]);
      // The young payment really was left out of the export, not lost on the way.
      const landed = await testDb.database.db
        .selectFrom('recon.transactions')
        .select('transaction_id')
        .where('transaction_id', '=', youngPayment)
        .execute();
      expect(landed).toEqual([]);
    } finally {
      await harness.close();
    }
  });

  it.skipIf(skip)(
    'a backfill right after a payment says the export may lag instead of calling the order missing',
    async () => {
      const orderId = `lag-${backend}-backfill`;
      await pay(orderId);
      const now = sandbox.clock.now();
      await insertOrders(testDb.database, [{ id: orderId, amount: 2500n, status: 'paid', createdAt: now }]);
      const result = await backfill(testDb.database, [{ identifier: IDENTIFIER, client: client }], {
        orderIds: [orderId],
        batchSize: 200,
        toleranceMinor: 0n,
        graceHours: 24,
        now: () => now,
      });
      expect(result.verdicts).toEqual([
        expect.objectContaining({
          orderId,
          status: 'pending',
          transactions: 0,
          lagNote: expect.stringContaining('its export may lag'),
        }),
      ]);

      // An hour on, the payment is in the export: the same backfill finds it, the order is matched at once though
      // still within its grace period, and the note is gone.
      sandbox.clock.advance(HOUR + 1000);
      const later = new Date(now.getTime() + HOUR + 1000);
      const again = await backfill(testDb.database, [{ identifier: IDENTIFIER, client: client }], {
        orderIds: [orderId],
        batchSize: 200,
        toleranceMinor: 0n,
        graceHours: 24,
        now: () => later,
      });
      expect(again.verdicts).toEqual([
        expect.objectContaining({ orderId, status: 'matched', transactions: 1, settledMinor: '2500', lagNote: null }),
      ]);
    },
  );
});
