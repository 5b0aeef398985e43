import { createServer, type AddressInfo, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { syncOrders } from '../../pipelines/sync-orders.ts';
import type { OrdersSourceConfig } from '../../src/config/config.ts';
import type { LoadedOrderImport, OrderImportResult } from '../../src/orders/order-import-result.ts';
import { expectReconError } from '../support/expect-recon-error.ts';
import { createShopDatabase, SHOP_COLUMNS, type ShopDatabase } from './shop-database.ts';
import { BACKENDS, createTestDatabase, hasPostgres, type TestDatabase } from '../support/test-database.ts';

/** The orders query of a shop table, in id order so positions are known. */
const selectOrders = (table: string) => `SELECT ${SHOP_COLUMNS} FROM ${table} ORDER BY id`;

// The merchant's database is always a real PostgreSQL server (a second database the suite creates); recon's own
// database is each backend in turn.
describe.each(BACKENDS)('syncOrders from PostgreSQL into %s', (backend) => {
  const skip = !hasPostgres;
  let testDb: TestDatabase;
  let shop: ShopDatabase;
  beforeAll(async () => {
    if (skip) return;
    testDb = await createTestDatabase(backend);
    shop = await createShopDatabase();
  });
  afterAll(async () => {
    await testDb?.drop();
    await shop?.drop();
  });

  const source = (query: string, url = shop.urlWithPassword): OrdersSourceConfig => ({ databaseUrl: url, query });

  async function query<Row = Record<string, unknown>>(text: string, params: unknown[] = []): Promise<Row[]> {
    return (await testDb.database.transaction((c) => c.query<Row>(text, params))).rows;
  }

  async function counts(prefix: string) {
    const [row] = await query<{ orders: number; imports: number }>(
      `SELECT (SELECT count(*) FROM recon.orders WHERE order_id LIKE $1 || '%')::int AS orders,
              (SELECT count(*) FROM recon.order_imports)::int AS imports`,
      [prefix],
    );
    return row!;
  }

  const loaded = (result: OrderImportResult): LoadedOrderImport => {
    if (result.status !== 'loaded') throw new Error(`not loaded: ${JSON.stringify(result)}`);
    return result;
  };

  it.skipIf(skip)(
    'streams thousands of orders, exactly as the source holds them, and keeps the bad rows with their position and row',
    async () => {
      await shop.createTable('shop_orders', 'SH', 5000);
      await shop.exec(`INSERT INTO shop_orders (id, order_id, amount_minor, currency, status, refunded_minor, payment_method, created_at) VALUES
      (5001, 'SHBAD1', -5, 'EUR', 'paid', 0, 'wallet', '2024-05-01 12:00:00+00'),
      (5002, 'SHBAD2', 100, 'XXY', 'paid', 0, 'wallet', '2024-05-01 12:00:00+00'),
      (5003, 'SHBAD3', 100, 'EUR', 'shipped', 0, 'wallet', '2024-05-01 12:00:00+00'),
      (5004, 'SHBAD4', 100, 'EUR', 'refunded', 200, 'wallet', '2024-05-01 12:00:00+00'),
      (5005, NULL, 100, 'EUR', 'paid', 0, 'wallet', '2024-05-01 12:00:00+00'),
      (5006, 'SHBIG', 9007199254740993, 'JPY', 'paid', NULL, 'instalment', '2024-05-01 12:00:00.654321+02')`);
      const progress: number[] = [];
      const result = await syncOrders(testDb.database, source(selectOrders('shop_orders')), {
        onProgress: (rows) => progress.push(rows),
      });

      expect(result).toEqual({
        source: 'database',
        name: shop.name,
        sha256: null,
        status: 'loaded',
        importId: expect.any(String),
        rows: 5006,
        inserted: 5001,
        updated: 0,
        unchanged: 0,
        superseded: 0,
        rejected: 5,
      });
      expect(result.name).not.toContain(shop.password);
      expect(progress).toEqual([1000, 2000, 3000, 4000, 5000, 5006]);
      const importId = loaded(result).importId;
      const [recorded] = await query(
        'SELECT source, name, sha256, status, rows_total, rows_inserted, rows_rejected, error FROM recon.order_imports WHERE import_id = $1',
        [importId],
      );
      expect(recorded).toEqual({
        source: 'database',
        name: shop.name,
        sha256: null,
        status: 'loaded',
        rows_total: 5006,
        rows_inserted: 5001,
        rows_rejected: 5,
        error: null,
      });

      const stored = await query(
        `SELECT order_id, amount_minor::text AS amount_minor, currency, status, refunded_minor::text AS refunded_minor, payment_method,
              to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US') AS created_at, import_id::text AS import_id, line
       FROM recon.orders WHERE order_id IN ('SH1', 'SH4', 'SH5000', 'SHBIG') ORDER BY order_id`,
      );
      expect(stored).toEqual([
        {
          order_id: 'SH1',
          amount_minor: '105',
          currency: 'EUR',
          status: 'authorized',
          refunded_minor: '0',
          payment_method: 'instalment',
          created_at: '2024-05-01T00:01:00.123456',
          import_id: importId,
          line: null,
        },
        {
          order_id: 'SH4',
          amount_minor: '405',
          currency: 'EUR',
          status: 'partially_refunded',
          refunded_minor: '100',
          payment_method: 'wallet',
          created_at: '2024-05-01T00:04:00.123456',
          import_id: importId,
          line: null,
        },
        {
          order_id: 'SH5000',
          amount_minor: '500005',
          currency: 'EUR',
          status: 'paid',
          refunded_minor: '0',
          payment_method: 'wallet',
          created_at: '2024-05-04T11:20:00.123456',
          import_id: importId,
          line: null,
        },
        // Beyond 2^53 and to the microsecond: no value went through a JS number or a Date.
        {
          order_id: 'SHBIG',
          amount_minor: '9007199254740993',
          currency: 'JPY',
          status: 'paid',
          refunded_minor: '0',
          payment_method: 'instalment',
          created_at: '2024-05-01T10:00:00.654321',
          import_id: importId,
          line: null,
        },
      ]);

      const rejected = await query<{ line: number; raw: string; reason: string }>(
        'SELECT line, raw, reason FROM recon.rejected_order_rows WHERE import_id = $1 ORDER BY line',
        [importId],
      );
      expect(rejected.map((r) => [r.line, r.reason])).toEqual([
        [5001, 'amount_minor: "-5" is negative'],
        [5002, 'currency: "XXY" is not an ISO 4217 currency code'],
        [5003, 'status: "shipped" is not one of paid, authorized, cancelled, refunded, partially_refunded'],
        [5004, 'refunded_minor: "200" is more than the amount_minor "100"'],
        [5005, 'order_id: empty, but every order needs one'],
      ]);
      expect(JSON.parse(rejected[0]!.raw)).toEqual({
        order_id: 'SHBAD1',
        amount_minor: '-5',
        currency: 'EUR',
        status: 'paid',
        refunded_minor: '0',
        payment_method: 'wallet',
        created_at: '2024-05-01 12:00:00+00',
      });
      expect(JSON.parse(rejected[4]!.raw)).toMatchObject({ order_id: null });
    },
  );

  it.skipIf(skip)(
    're-syncs: only the orders changed at the source are updated, with the new import as lineage',
    async () => {
      await shop.createTable('resync_orders', 'RS', 20);
      const first = loaded(await syncOrders(testDb.database, source(selectOrders('resync_orders'))));
      expect(first).toMatchObject({ rows: 20, inserted: 20, updated: 0, unchanged: 0 });

      const again = loaded(await syncOrders(testDb.database, source(selectOrders('resync_orders'))));
      expect(again).toMatchObject({ rows: 20, inserted: 0, updated: 0, unchanged: 20, rejected: 0 });

      await shop.exec("UPDATE resync_orders SET status = 'refunded', refunded_minor = amount_minor WHERE id IN (2, 6)");
      await shop.exec(
        "INSERT INTO resync_orders SELECT 21, 'RS21', 2105, 'EUR', 'paid', 0, 'wallet', '2024-05-02 00:00:00+00'",
      );
      const third = loaded(await syncOrders(testDb.database, source(selectOrders('resync_orders'))));
      expect(third).toMatchObject({ rows: 21, inserted: 1, updated: 2, unchanged: 18, rejected: 0 });
      const lineage = await query<{ order_id: string; import_id: string }>(
        "SELECT order_id, import_id::text AS import_id FROM recon.orders WHERE order_id LIKE 'RS%' AND import_id <> $1 ORDER BY order_id",
        [first.importId],
      );
      expect(lineage).toEqual([
        { order_id: 'RS2', import_id: third.importId },
        { order_id: 'RS21', import_id: third.importId },
        { order_id: 'RS6', import_id: third.importId },
      ]);
    },
  );

  it.skipIf(skip)('lets the last row of an order the query returns twice win', async () => {
    await shop.createTable('twice_orders', 'TW', 3);
    const twice = `SELECT ${SHOP_COLUMNS} FROM (
      SELECT 1 AS k, id, ${SHOP_COLUMNS} FROM twice_orders
      UNION ALL SELECT 2, id, order_id, amount_minor + 1, currency, status, refunded_minor, payment_method, created_at FROM twice_orders WHERE id = 2
    ) q ORDER BY k, id`;
    const result = loaded(await syncOrders(testDb.database, source(twice)));
    expect(result).toMatchObject({ rows: 4, inserted: 3, superseded: 1, rejected: 0 });
    const [row] = await query<{ amount_minor: string }>(
      "SELECT amount_minor::text AS amount_minor FROM recon.orders WHERE order_id = 'TW2'",
    );
    expect(row!.amount_minor).toBe('206');
  });

  it.skipIf(skip)('reads rows whose columns are text or numeric as the text the source holds', async () => {
    await shop.exec(`CREATE TABLE text_orders AS SELECT * FROM (VALUES
      ('TX1', '1250'::numeric, 'eur', 'PAID', NULL::text, 'Wallet', '2024-05-01T12:00:00+05:30'),
      ('TX2', '99'::numeric, 'EUR', 'paid', '0', 'wallet', '2024-05-01 12:00:00'),
      ('TX3', '12.50'::numeric, 'EUR', 'paid', '0', 'wallet', '2024-05-01T12:00:00Z')
    ) AS t (order_id, amount_minor, currency, status, refunded_minor, payment_method, created_at)`);
    const result = loaded(await syncOrders(testDb.database, source('SELECT * FROM text_orders ORDER BY order_id')));
    expect(result).toMatchObject({ rows: 3, inserted: 1, rejected: 2 });
    const rows = await query(
      "SELECT order_id, amount_minor::text AS amount_minor, currency, status, payment_method, to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI') AS created_at FROM recon.orders WHERE order_id LIKE 'TX%'",
    );
    expect(rows).toEqual([
      {
        order_id: 'TX1',
        amount_minor: '1250',
        currency: 'EUR',
        status: 'paid',
        payment_method: 'wallet',
        created_at: '2024-05-01 06:30',
      },
    ]);
    const reasons = await query<{ line: number; reason: string }>(
      'SELECT line, reason FROM recon.rejected_order_rows WHERE import_id = $1 ORDER BY line',
      [result.importId],
    );
    expect(reasons).toEqual([
      {
        line: 2,
        reason: 'created_at: "2024-05-01 12:00:00" has no UTC offset (Z or +hh:mm), so the instant it means is unknown',
      },
      { line: 3, reason: 'amount_minor: "12.50" is not a whole number of minor units' },
    ]);
  });

  it.skipIf(skip)(
    'fails, commits nothing and records ORDERS_SOURCE when the query breaks after rows were already streamed',
    async () => {
      await shop.createTable('breaking_orders', 'BK', 5000);
      const before = await counts('BK');
      // No ORDER BY: rows come off the heap in insertion order, so row 4001 is reached only as the cursor gets there.
      const breaking = `SELECT order_id, (amount_minor / CASE WHEN id <= 4000 THEN 1 ELSE 0 END) AS amount_minor, currency, status, refunded_minor,
      payment_method, created_at FROM breaking_orders`;
      const progress: number[] = [];
      const result = await syncOrders(testDb.database, source(breaking), { onProgress: (rows) => progress.push(rows) });
      expect(result).toEqual({
        source: 'database',
        name: shop.name,
        sha256: null,
        status: 'failed',
        importId: expect.any(String),
        errorCode: 'ORDERS_SOURCE',
        error: `${shop.name}: the orders query failed: division by zero`,
      });
      // Streamed: whole batches had arrived (and been staged) before the source failed.
      expect(progress.length).toBeGreaterThanOrEqual(3);
      expect(progress.at(-1)).toBeLessThanOrEqual(4000);
      expect(await counts('BK')).toEqual({ orders: 0, imports: before.imports + 1 });
      const [recorded] = await query(
        'SELECT source, name, status, error_code, error, rows_total FROM recon.order_imports WHERE import_id = $1',
        [(result as { importId: string }).importId],
      );
      expect(recorded).toEqual({
        source: 'database',
        name: shop.name,
        status: 'failed',
        error_code: 'ORDERS_SOURCE',
        error: result.status === 'failed' && result.error,
        rows_total: null,
      });
    },
  );

  it.skipIf(skip).each([
    [
      'a query without the order columns',
      'SELECT 1 AS id, 2 AS amount',
      'RECON_ORDERS_QUERY returns no columns order_id, amount_minor, currency, status, payment_method, created_at (it returns: id, amount)',
    ],
    [
      'a query without rows nor the order columns',
      'SELECT 1 AS id WHERE false',
      'RECON_ORDERS_QUERY returns no columns order_id, amount_minor, currency, status, payment_method, created_at (it returns: id)',
    ],
    ['a query that does not parse', 'SELEC 1', 'the orders query failed: syntax error at or near "SELEC"'],
    [
      'a query of a missing table',
      'SELECT * FROM no_such_orders',
      'the orders query failed: relation "no_such_orders" does not exist',
    ],
    [
      'a query that writes',
      'WITH gone AS (DELETE FROM protected_orders RETURNING id) SELECT * FROM gone',
      'the orders query failed: cannot execute SELECT in a read-only transaction',
    ],
  ])('fails with ORDERS_SOURCE on %s, naming the database', async (_name, sql, reason) => {
    await shop.exec('CREATE TABLE IF NOT EXISTS protected_orders AS SELECT 1 AS id');
    const result = await syncOrders(testDb.database, source(sql));
    expect(result).toMatchObject({ status: 'failed', errorCode: 'ORDERS_SOURCE', error: `${shop.name}: ${reason}` });
    expect(await shop.count('protected_orders')).toBe(1);
  });

  it.skipIf(skip)(
    'fails with ORDERS_SOURCE, rather than waiting forever, when the connection dies mid-stream',
    async () => {
      await shop.createTable('dying_orders', 'DY', 3000);
      const before = await counts('DY');
      const lockKey = 7_340_001;
      // Row 1500 waits for an advisory lock the test holds, so the connection is surely mid-stream when it is killed.
      const waiting = `SELECT ${SHOP_COLUMNS}, CASE WHEN id = 1500 THEN (SELECT 1 FROM (SELECT pg_advisory_xact_lock_shared(${lockKey})) AS l) END AS waited
      FROM dying_orders ORDER BY id`;
      await shop.exec(`SELECT pg_advisory_lock(${lockKey})`);
      try {
        const sync = syncOrders(testDb.database, source(waiting));
        const [waiter] = await shop.waitForLockWaiter();
        await shop.exec(`SELECT pg_terminate_backend(${waiter!.pid})`);
        const result = await sync;
        expect(result).toMatchObject({
          status: 'failed',
          errorCode: 'ORDERS_SOURCE',
          error: expect.stringMatching(/the orders query failed: .*terminat/),
        });
        expect((result as { error: string }).error).not.toContain('\n');
      } finally {
        await shop.exec(`SELECT pg_advisory_unlock(${lockKey})`);
      }
      expect(await counts('DY')).toEqual({ orders: 0, imports: before.imports + 1 });
    },
  );

  it.skipIf(skip)(
    'fails with ORDERS_SOURCE in one line when the database cannot be reached, without its password',
    async () => {
      const url = 'postgres://shop:hunter2@127.0.0.1:1/shop';
      const result = await syncOrders(testDb.database, source('SELECT 1', url));
      expect(result).toMatchObject({
        source: 'database',
        name: '127.0.0.1:1/shop',
        status: 'failed',
        errorCode: 'ORDERS_SOURCE',
        error: expect.stringMatching(/^127\.0\.0\.1:1\/shop: cannot connect to the orders database: .*ECONNREFUSED/),
      });
      expect(JSON.stringify(result)).not.toContain('hunter2');
    },
  );

  it.skipIf(skip)('refuses a missing or malformed variable as CONFIG, naming it, before reading anything', async () => {
    const before = await counts('');
    await expectReconError(
      () => syncOrders(testDb.database, { databaseUrl: undefined, query: 'SELECT 1' }),
      'CONFIG',
      'RECON_ORDERS_DATABASE_URL',
    );
    await expectReconError(
      () => syncOrders(testDb.database, { databaseUrl: shop.url, query: undefined }),
      'CONFIG',
      'RECON_ORDERS_QUERY',
    );
    await expectReconError(
      () => syncOrders(testDb.database, { databaseUrl: 'shop.example', query: 'SELECT 1' }),
      'CONFIG',
      'RECON_ORDERS_DATABASE_URL',
    );
    expect(await counts('')).toEqual(before);
  });

  it.skipIf(skip)('stopped mid-sync: nothing is committed nor recorded, and the reason is rethrown', async () => {
    await shop.createTable('stopped_orders', 'SP', 3000);
    const before = await counts('SP');
    const controller = new AbortController();
    const stop = new Error('stopped by the test');
    const run = syncOrders(testDb.database, source(selectOrders('stopped_orders')), {
      signal: controller.signal,
      onProgress: (rows) => rows >= 1000 && controller.abort(stop),
    });
    await expect(run).rejects.toBe(stop);
    expect(await counts('SP')).toEqual(before);
  });

  it.skipIf(skip)(
    'stopped while connecting to a database that never answers: stops at once, records nothing',
    async () => {
      // A server that accepts the connection and then says nothing, like a host behind a firewall that drops packets.
      const sockets: Socket[] = [];
      const silent = createServer((socket) => sockets.push(socket));
      await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
      const { port } = silent.address() as AddressInfo;
      const controller = new AbortController();
      const stop = new Error('stopped by the test');
      silent.once('connection', () => controller.abort(stop));
      try {
        const before = await counts('NONE');
        const run = syncOrders(
          testDb.database,
          source('SELECT 1', `postgres://merchant:secret@127.0.0.1:${port}/shop`),
          { signal: controller.signal },
        );
        await expect(run).rejects.toBe(stop);
        expect(await counts('NONE')).toEqual(before);
      } finally {
        for (const socket of sockets) socket.destroy();
        await new Promise((resolve) => silent.close(resolve));
      }
    },
  );
});
