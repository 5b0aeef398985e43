import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/config.ts';
import { runOrderIds } from '../../src/nightly/run-order-ids.ts';
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
    await insertOrders(testDb.database, [{ id: 'later', amount: 100n, status: 'paid', createdAt: new Date(AS_OF.getTime() + DAY) }]);
    expect(await runOrderIds(testDb.database.db, AS_OF, 30)).toEqual(['old-open', 'young']);

    // Once its latest verdict is matched (the order was cancelled after all), the old order is final.
    await insertOrders(testDb.database, [{ id: 'old-open', amount: 100n, status: 'cancelled', createdAt: ago(60) }]);
    await reconcile(testDb.database, { scope: { kind: 'orders', orderIds: ['old-open'] }, asOf: ago(1), ...loadConfig({}).reconcile });
    expect(await runOrderIds(testDb.database.db, AS_OF, 30)).toEqual(['young']);
  });
});
