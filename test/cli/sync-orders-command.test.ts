import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createShopDatabase, SHOP_COLUMNS, type ShopDatabase } from '../orders/shop-database.ts';
import { BACKENDS, createTestDatabase, hasPostgres, type TestDatabase } from '../support/test-database.ts';
import { oneProcessPerExitCode, runReconInProcess, startRecon } from './run-recon.ts';

// Each exit code's first run in this file is a process of its own, on the backend that runs first; the others run in
// this one. A process on PGlite opens its database from scratch: seconds of CPU for nothing the exit code depends on.
const variant = oneProcessPerExitCode();

// The merchant's database is always a real PostgreSQL server; recon's own database is each backend in turn.
describe.each(BACKENDS)('recon sync-orders into %s', (backend) => {
  const skip = !hasPostgres;
  let testDb: TestDatabase;
  let shop: ShopDatabase;
  beforeAll(async () => {
    if (skip) return;
    testDb = await createTestDatabase(backend);
    await testDb.close();
    shop = await createShopDatabase();
  });
  afterAll(async () => {
    await testDb?.drop();
    await shop?.drop();
  });

  const settings = (query: string, url: string) => ({
    ...testDb.env,
    RECON_ORDERS_DATABASE_URL: url,
    RECON_ORDERS_QUERY: query,
  });
  const sync = (query: string, args: string[] = [], url = shop.urlWithPassword) =>
    runReconInProcess(['sync-orders', ...args], settings(query, url));
  const syncExiting = (code: number, query: string, args: string[] = []) =>
    variant(['sync-orders', ...args], settings(query, shop.urlWithPassword), code);

  it.skipIf(skip)('prints one summary line and exits 0, then 3 once a row is rejected, with --json', async () => {
    await shop.createTable('cli_orders', 'CL', 2500);
    const query = `SELECT ${SHOP_COLUMNS} FROM cli_orders ORDER BY id`;
    expect(await syncExiting(0, query)).toEqual({
      code: 0,
      stdout: `${shop.name}: loaded rows=2500 inserted=2500 updated=0 unchanged=0 rejected=0\n`,
      stderr: '',
    });
    await shop.exec("UPDATE cli_orders SET currency = 'EURO' WHERE id = 7");
    const result = await syncExiting(3, query, ['--json']);
    expect(result.code).toBe(3);
    expect(result.stderr).toBe('');
    expect(JSON.parse(result.stdout)).toEqual({
      source: 'database',
      name: shop.name,
      status: 'loaded',
      importId: expect.any(String),
      sha256: null,
      rows: 2500,
      inserted: 0,
      updated: 0,
      unchanged: 2499,
      superseded: 0,
      rejected: 1,
      errorCode: null,
      error: null,
    });
    expect(result.stdout).not.toContain(shop.password);
  });

  it.skipIf(skip)('exits 2 with one line when the query fails or the database cannot be reached', async () => {
    expect(await syncExiting(2, 'SELECT * FROM no_such_orders')).toEqual({
      code: 2,
      stdout: `${shop.name}: failed: the orders query failed: relation "no_such_orders" does not exist\n`,
      stderr: '',
    });
    const unreachable = await sync('SELECT 1', ['--json'], 'postgres://shop:hunter2@127.0.0.1:1/shop');
    expect(unreachable.code).toBe(2);
    expect(JSON.parse(unreachable.stdout)).toMatchObject({
      source: 'database',
      name: '127.0.0.1:1/shop',
      status: 'failed',
      errorCode: 'ORDERS_SOURCE',
      error: expect.stringMatching(/^127\.0\.0\.1:1\/shop: cannot connect to the orders database: .*ECONNREFUSED/),
    });
    expect(unreachable.stdout + unreachable.stderr).not.toContain('hunter2');
  });

  it.skipIf(skip).each([
    ['RECON_ORDERS_DATABASE_URL', { RECON_ORDERS_QUERY: 'SELECT 1' }],
    ['RECON_ORDERS_QUERY', { RECON_ORDERS_DATABASE_URL: 'postgres://shop@127.0.0.1/shop' }],
    [
      'RECON_ORDERS_DATABASE_URL',
      { RECON_ORDERS_DATABASE_URL: 'host=db password=hunter2', RECON_ORDERS_QUERY: 'SELECT 1' },
    ],
  ])('exits 1 naming %s when it is missing or malformed', async (variable, env) => {
    const result = await variant(['sync-orders'], { ...testDb.env, ...env }, 1);
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr).toMatch(new RegExp(`^recon sync-orders: [^\\n]*${variable}[^\\n]*\\n$`));
    expect(result.stderr).not.toContain('hunter2');
  });

  it.skipIf(skip)('exits 1 on an unknown option', async () => {
    expect(await variant(['sync-orders', 'extra'], settings('SELECT 1', shop.urlWithPassword), 1)).toMatchObject({
      code: 1,
      stdout: '',
      stderr: expect.stringMatching(/^recon sync-orders: .*extra/),
    });
  });

  it.skipIf(skip)(
    'SIGINT while the merchant database makes the sync wait: stops at once, commits nothing, one line, exit 2',
    async () => {
      await shop.createTable('waiting_orders', 'WT', 2000);
      const lockKey = 7_340_002;
      const waiting = `SELECT ${SHOP_COLUMNS}, CASE WHEN id = 1500 THEN (SELECT 1 FROM (SELECT pg_advisory_xact_lock_shared(${lockKey})) AS l) END AS waited
      FROM waiting_orders ORDER BY id`;
      await shop.exec(`SELECT pg_advisory_lock(${lockKey})`);
      let result;
      try {
        const recon = startRecon(['sync-orders'], {
          ...testDb.env,
          RECON_ORDERS_DATABASE_URL: shop.url,
          RECON_ORDERS_QUERY: waiting,
        });
        await shop.waitForLockWaiter();
        recon.child.kill('SIGINT');
        // The lock is still held: the run can only end because the signal ended it.
        result = await recon.done;
      } finally {
        await shop.exec(`SELECT pg_advisory_unlock(${lockKey})`);
      }
      expect(result).toEqual({
        code: 2,
        stdout: '',
        stderr: 'recon sync-orders: interrupted by SIGINT: nothing of the sync was committed\n',
      });
      const database = await testDb.reopen();
      try {
        const orders = await database.db
          .selectFrom('recon.orders')
          .select('order_id')
          .where('order_id', 'like', 'WT%')
          .execute();
        expect(orders).toEqual([]);
      } finally {
        await testDb.close();
      }
    },
  );
});
