import { readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { buffer } from 'node:stream/consumers';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStoredDelivery } from '../../src/receive/open-stored-delivery.ts';
import { spoolDelivery } from '../../src/receive/spool-delivery.ts';
import { expectReconError } from '../support/expect-recon-error.ts';
import { BACKENDS, createTestDatabase, hasPostgres, type TestDatabase } from '../support/test-database.ts';
import { multipart, send, startTestReceiver, type TestReceiver } from './receiver-harness.ts';

describe.each(BACKENDS)('stored deliveries read back on %s', (backend) => {
  const skip = backend === 'postgres' && !hasPostgres;
  let testDb: TestDatabase;
  let receiver: TestReceiver;

  beforeAll(async () => {
    if (skip) return;
    testDb = await createTestDatabase(backend);
    receiver = await startTestReceiver(testDb.database);
  });
  afterAll(async () => {
    await receiver?.close();
    await testDb?.drop();
  });

  async function deliver(filename: string, content: Buffer): Promise<string> {
    const issued = await receiver.issue();
    const form = multipart([{ name: 'file', value: content, filename }]);
    expect(
      (await send(issued.callbackUrl, { headers: { 'content-type': form.contentType }, body: form.body })).status,
    ).toBe(200);
    return receiver.delivered.at(-1)!;
  }

  it.skipIf(skip)(
    'spools to a file named after the delivery alone, in a folder of its own that remove() deletes',
    async () => {
      const deliveryId = await deliver('../../etc/ex port;1.csv.gz', Buffer.from('bytes'));
      const spooled = await spoolDelivery(testDb.database.db, deliveryId);
      try {
        expect(path.basename(spooled.path)).toBe(`delivery-${deliveryId}`);
        expect(path.basename(path.dirname(spooled.path))).toMatch(new RegExp(`^recon-${process.pid}-delivery-`));
        expect(await readFile(spooled.path, 'utf8')).toBe('bytes');
      } finally {
        await spooled.remove();
      }
      await expect(stat(path.dirname(spooled.path))).rejects.toMatchObject({ code: 'ENOENT' });
    },
  );

  it.skipIf(skip)('fails with DELIVERY_NOT_FOUND for an unknown delivery', async () => {
    await expectReconError(
      () => openStoredDelivery(testDb.database.db, '999999'),
      'DELIVERY_NOT_FOUND',
      'delivery 999999',
    );
  });

  it.skipIf(skip)(
    'fails the stream with DELIVERY_CORRUPT when the stored bytes no longer match their sha256',
    async () => {
      const deliveryId = await deliver('a.csv', Buffer.from('TRANSACTIONID;ORDERID\nT1;O1\n'));
      await testDb.database.db
        .updateTable('recon.delivery_chunks')
        .set({ data: Buffer.from('TRANSACTIONID;ORDERID\nT1;O2\n') })
        .where('delivery_id', '=', deliveryId)
        .execute();
      const stored = await openStoredDelivery(testDb.database.db, deliveryId);
      await expectReconError(() => buffer(stored.content), 'DELIVERY_CORRUPT', `delivery ${deliveryId}`);
    },
  );
});
