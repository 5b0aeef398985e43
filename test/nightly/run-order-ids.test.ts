import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/config.ts';
import { runOrderIds } from '../../src/nightly/run-order-ids.ts';
import { recordNotification } from '../../src/notifications/record-notification.ts';
import { signParams } from '@recon/protocol';
import { reconcile } from '../../src/reconcile/reconcile.ts';
import { insertOrders } from '../reconcile/reconcile-scenario.ts';
import { BACKENDS, createTestDatabase, hasPostgres, type TestDatabase } from '../support/test-database.ts';

const DAY = 86_400_000;
const AS_OF = new Date('2026-11-23T02:30:00Z');
const ago = (days: number) => new Date(AS_OF.getTime() - days * DAY);

describe.each(BACKENDS)("a nightly run's orders on %s", (backend) => {
  const skip = backend === 'postgres' && !hasPostgres;
  let testDb: TestDatabase;
  beforeAll(async () => {
    if (!skip) testDb = await createTestDatabase(backend);
  });
  afterAll(async () => testDb?.drop());

  it.skipIf(skip)('are those created in the lookback and those whose latest verdict is not matched', async () => {
    await insertOrders(testDb.database, [
      { id: 'young', amount: 100n, status: 'paid', createdAt: ago(3) },
      // Old, paid, no transaction: missing_at_provider, an open exception.
      { id: 'old-open', amount: 100n, status: 'paid', createdAt: ago(60) },
      // Old, cancelled, no transaction: matched.
      { id: 'old-settled', amount: 100n, status: 'cancelled', createdAt: ago(60) },
    ]);
    await reconcile(testDb.database, { scope: { kind: 'all' }, asOf: ago(1), ...loadConfig({}).reconcile });
    // Created after the run's instant, never reconciled: not this run's.
    await insertOrders(testDb.database, [
      { id: 'later', amount: 100n, status: 'paid', createdAt: new Date(AS_OF.getTime() + DAY) },
    ]);
    expect(await runOrderIds(testDb.database.db, AS_OF, 30)).toEqual(['old-open', 'young']);

    // Once its latest verdict is matched (the order was cancelled after all), the old order is final.
    await insertOrders(testDb.database, [{ id: 'old-open', amount: 100n, status: 'cancelled', createdAt: ago(60) }]);
    await reconcile(testDb.database, {
      scope: { kind: 'orders', orderIds: ['old-open'] },
      asOf: ago(1),
      ...loadConfig({}).reconcile,
    });
    expect(await runOrderIds(testDb.database.db, AS_OF, 30)).toEqual(['young']);
  });

  it.skipIf(skip)(
    'include the ORDERID of every notification with a valid HASH received in the lookback that is not an order',
    async () => {
      await insertOrders(testDb.database, [{ id: 'booked', amount: 100n, status: 'paid', createdAt: ago(2) }]);
      const notification = (orderId: string, fields: { hashValid?: boolean; receivedAt?: Date } = {}) =>
        recordNotification(testDb.database.db, signed(orderId), {
          accounts: [{ identifier: IDENTIFIER, secret: fields.hashValid === false ? 'another-secret' : SECRET }],
          receivedAt: fields.receivedAt ?? ago(1),
        });
      await notification('lost-order');
      await notification('lost-order');
      await notification('booked');
      await notification('forged', { hashValid: false });
      await notification('too-old', { receivedAt: ago(31) });
      await notification('after-the-run', { receivedAt: new Date(AS_OF.getTime() + DAY) });
      // What a request cannot carry: it would fail its whole batch.
      await notification('two;ids');
      await notification('x'.repeat(41));
      const ids = await runOrderIds(testDb.database.db, AS_OF, 30);
      expect(ids).toContain('lost-order');
      expect(ids.filter((id) => id === 'lost-order' || id === 'booked')).toEqual(['booked', 'lost-order']);
      for (const absent of ['forged', 'too-old', 'after-the-run', 'two;ids', 'x'.repeat(41)])
        expect(ids).not.toContain(absent);
    },
  );
});

const IDENTIFIER = 'RUN-ORDER-IDS-SHOP';
const SECRET = 'run-order-ids-secret';

/** A payment notification of `orderId`, signed with SECRET. */
function signed(orderId: string): Record<string, string> {
  const fields = {
    IDENTIFIER,
    OPERATIONTYPE: 'payment',
    TRANSACTIONID: `T-${orderId}`,
    ORDERID: orderId,
    EXECCODE: '0000',
    AMOUNT: '100',
    CURRENCY: 'EUR',
    VERSION: '3.0',
  };
  return signParams(SECRET, fields) as Record<string, string>;
}
