import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeNotification } from '@recon/protocol';
import { holdTransaction, lockWaiters } from '../support/held-transaction.ts';
import { BACKENDS, createTestDatabase, hasPostgres, type TestDatabase } from '../support/test-database.ts';
import { waitUntil } from '../support/wait-until.ts';
import { IDENTIFIER, multipart, send, SECRET, startTestReceiver, type TestReceiver } from './receiver-harness.ts';

const FORM = { 'content-type': 'application/x-www-form-urlencoded' };

function notification(transactionId: string): Record<string, string> {
  return {
    IDENTIFIER,
    OPERATIONTYPE: 'payment',
    TRANSACTIONID: transactionId,
    ORDERID: `ORDER-${transactionId}`,
    EXECCODE: '0000',
    AMOUNT: '4990',
    CURRENCY: 'EUR',
    VERSION: '3.0',
    EXTRADATA: '',
  };
}

/**
 * The service sends a notification again until it is answered OK, and anyone may replay one: the same fields and
 * HASH are one notification, stored once with how many times it was received.
 */
describe.each(BACKENDS)('notifications received again on %s', (backend) => {
  const skip = backend === 'postgres' && !hasPostgres;
  let testDb: TestDatabase;
  let receiver: TestReceiver;
  let clock = new Date('2026-11-20T10:00:00Z');

  beforeAll(async () => {
    if (skip) return;
    testDb = await createTestDatabase(backend);
    receiver = await startTestReceiver(testDb.database, { now: () => clock });
  });
  afterAll(async () => {
    await receiver?.close();
    await testDb?.drop();
  });

  const post = (body: string) => send(`${receiver.url}/notify`, { headers: FORM, body });

  async function stored(transactionId: string) {
    return testDb.database.db
      .selectFrom('recon.notifications')
      .select(['notification_id', 'hash_valid', 'receipts', 'received_at', 'last_received_at', 'raw'])
      .where('transaction_id', '=', transactionId)
      .orderBy('notification_id')
      .execute();
  }

  it.skipIf(skip)(
    'stores a valid notification replayed three times once, by GET, POST or multipart, counting its receipts',
    async () => {
      const body = encodeNotification(notification('TX-REPLAY'), SECRET);
      clock = new Date('2026-11-20T10:00:00Z');
      expect(await post(body)).toMatchObject({ status: 200, text: 'OK' });
      clock = new Date('2026-11-20T10:00:05Z');
      // The same fields in another order, by GET.
      const reordered = new URLSearchParams([...new URLSearchParams(body)].reverse()).toString();
      expect(await send(`${receiver.url}/notify?${reordered}`, { method: 'GET' })).toMatchObject({
        status: 200,
        text: 'OK',
      });
      clock = new Date('2026-11-20T10:01:00Z');
      const form = multipart([...new URLSearchParams(body)].map(([name, value]) => ({ name, value })));
      expect(
        await send(`${receiver.url}/notify`, { headers: { 'content-type': form.contentType }, body: form.body }),
      ).toMatchObject({ status: 200, text: 'OK' });

      const rows = await stored('TX-REPLAY');
      expect(rows).toEqual([
        expect.objectContaining({
          hash_valid: true,
          receipts: '3',
          received_at: new Date('2026-11-20T10:00:00Z'),
          last_received_at: new Date('2026-11-20T10:01:00Z'),
        }),
      ]);
      // The bytes of the first receipt are the evidence kept.
      expect(Buffer.from(rows[0]!.raw!).toString('latin1')).toBe(body);

      const events = receiver.events.filter((event) => event.type === 'notification');
      expect(events.map((event) => [event.notificationId, event.receipts])).toEqual([
        [String(rows[0]!.notification_id), 1],
        [String(rows[0]!.notification_id), 2],
        [String(rows[0]!.notification_id), 3],
      ]);
      const metrics = await receiver.metrics.metrics();
      expect(metrics).toContain('recon_notifications_total{hash="valid"} 1\n');
      expect(metrics).toContain('recon_notifications_repeated_total{hash="valid"} 2\n');
    },
  );

  it.skipIf(skip)(
    'stores a forged notification replayed once too, apart from the genuine one that differs by its HASH',
    async () => {
      const genuine = encodeNotification(notification('TX-FORGED'), SECRET);
      const forged = genuine.replace(/HASH=[0-9a-f]+/, `HASH=${'0'.repeat(64)}`);
      for (const body of [forged, forged, genuine, forged]) await post(body);
      expect(await post(forged)).toMatchObject({ status: 400 });
      expect((await stored('TX-FORGED')).map(({ hash_valid, receipts }) => ({ hash_valid, receipts }))).toEqual([
        { hash_valid: false, receipts: '4' },
        { hash_valid: true, receipts: '1' },
      ]);
    },
  );

  it.skipIf(skip)('tells a notification that differs by one field from a replay', async () => {
    await post(encodeNotification(notification('TX-TWO'), SECRET));
    await post(encodeNotification({ ...notification('TX-TWO'), EXECCODE: '4001' }, SECRET));
    await post(encodeNotification({ ...notification('TX-TWO'), EXTRADATA: 'x' }, SECRET));
    expect((await stored('TX-TWO')).map((row) => row.receipts)).toEqual(['1', '1', '1']);
  });

  it.skipIf(skip || backend === 'pglite')(
    'stores one row for two replays that reach the database at once on two connections',
    async () => {
      const body = encodeNotification(notification('TX-RACE'), SECRET);
      // Both inserts wait behind the table lock, then go on together.
      const holder = await holdTransaction(testDb.env.DATABASE_URL!, ['LOCK TABLE recon.notifications IN SHARE MODE']);
      try {
        const answers = [post(body), post(body)];
        await waitUntil(
          'both replays to wait for the notifications table',
          async () =>
            (await lockWaiters(testDb.database.db)).filter((waiter) => waiter.relation === 'recon.notifications')
              .length === 2,
        );
        await holder.release();
        expect((await Promise.all(answers)).map(({ status, text }) => ({ status, text }))).toEqual([
          { status: 200, text: 'OK' },
          { status: 200, text: 'OK' },
        ]);
      } finally {
        await holder.release();
      }
      expect((await stored('TX-RACE')).map((row) => row.receipts)).toEqual(['2']);
    },
  );
});
