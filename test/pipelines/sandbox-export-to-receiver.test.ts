import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ingestFiles } from '../../pipelines/ingest-files.ts';
import { createPaymentClient } from '../../src/client/payment-client.ts';
import { loadConfig } from '../../src/config/config.ts';
import { spoolDelivery } from '../../src/receive/spool-delivery.ts';
import { createSandbox, type Sandbox } from '@recon/sandbox';
import { startTestReceiver, type TestReceiver } from '../receive/receiver-harness.ts';
import { BACKENDS, createTestDatabase, hasPostgres, type TestDatabase } from '../support/test-database.ts';

/**
 * The export's whole way in serve: a token issued for the request, the sandbox's callback upload (multipart, as the
 * service delivers it) taken by the receiver and stored in the database, then read back to a file and ingested.
 */
const IDENTIFIER = 'ACME';
const SECRET = 'export-to-receiver';

describe.each(BACKENDS)('sandbox export delivered to the receiver, stored, then ingested, on %s', (backend) => {
  const skip = backend === 'postgres' && !hasPostgres;
  let testDb: TestDatabase;
  let receiver: TestReceiver;
  let sandbox: Sandbox;

  beforeAll(async () => {
    if (skip) return;
    testDb = await createTestDatabase(backend);
    receiver = await startTestReceiver(testDb.database);
    sandbox = createSandbox({ identifier: IDENTIFIER, secret: SECRET, seed: 11 });
  });
  afterAll(async () => {
    await sandbox?.close();
    await receiver?.close();
    await testDb?.drop();
  });

  it.skipIf(skip)(
    "stores the delivered file with its fields, and it ingests to exactly the sandbox's transactions",
    async () => {
      const baseUrl = await sandbox.listen(0);
      const client = createPaymentClient({
        baseUrl,
        identifier: IDENTIFIER,
        secret: SECRET,
        timeoutMs: 5_000,
        retry: { attempts: 1, baseDelayMs: 10 },
      });
      const orderIds = sandbox.scenario!.orderIds;
      const issued = await receiver.issue({ orderIds, compression: 'gzip' });
      expect(issued.callbackUrl.length).toBeLessThanOrEqual(32);

      const receipt = await client.getTransactions({
        ORDERID: orderIds,
        COMPRESSION: 'gzip',
        CALLBACKURL: issued.callbackUrl,
      });
      expect(receipt.EXECCODE).toBe('0000');
      await receiver.until(() => receiver.delivered.length === 1);

      const stored = sandbox.store.all().filter((t) => orderIds.includes(t.orderId));
      const [deliveryId] = receiver.delivered;
      const delivery = await testDb.database.db
        .selectFrom('recon.deliveries')
        .selectAll()
        .where('delivery_id', '=', deliveryId!)
        .executeTakeFirstOrThrow();
      expect(delivery).toMatchObject({
        request_id: issued.requestId,
        content_type: 'application/gzip',
        filename: expect.stringMatching(/^transactions-.*\.csv\.gz$/),
        fields: { OPERATIONTYPE: 'getTransactions', IDENTIFIER, ROWS: String(stored.length) },
        state: 'received',
      });

      const spooled = await spoolDelivery(testDb.database.db, deliveryId!);
      try {
        const [result] = await ingestFiles(testDb.database, [spooled.path], {
          timezone: 'UTC',
          limits: loadConfig({}).limits,
        });
        expect(result).toMatchObject({
          status: 'loaded',
          compression: 'gzip',
          sha256: delivery.sha256,
          rows: stored.length,
          inserted: stored.length,
          rejected: 0,
        });
      } finally {
        await spooled.remove();
      }
      const ids = await testDb.database.db.selectFrom('recon.transactions').select('transaction_id').execute();
      expect(ids.map((row) => row.transaction_id).sort()).toEqual(stored.map((t) => t.transactionId).sort());
    },
  );
});
