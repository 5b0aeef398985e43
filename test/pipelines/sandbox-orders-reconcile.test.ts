import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { importOrderFiles } from '../../pipelines/import-orders.ts';
import { ingestFiles } from '../../pipelines/ingest-files.ts';
import { createPaymentClient } from '../../src/client/payment-client.ts';
import { loadConfig } from '../../src/config/config.ts';
import { runVerdicts } from '../../src/report/run-verdicts.ts';
import { reconcile } from '../../src/reconcile/reconcile.ts';
import { createSandbox, createSandboxClock, formatOrdersCsv, scenarioOrders, type Sandbox } from '@recon/sandbox';
import { createArrivals } from '../support/arrivals.ts';
import { closeServer, listenOnLoopback } from '../support/loopback.ts';
import { BACKENDS, createTestDatabase, hasPostgres, type TestDatabase } from '../support/test-database.ts';

/**
 * The merchant's side and the service's side of one seeded scenario meet in a reconciliation: the orders csv the
 * sandbox writes is imported with import-orders, the sandbox's export (delivered raw to a CALLBACKURL, gzip, as
 * the nightly flow receives it) is ingested, and `reconcile` must give every order exactly the verdict
 * scenarioOrders expects, at the sandbox clock's reading and later as the orders age.
 */
const IDENTIFIER = 'ORDERS-SHOP';
const SECRET = 'orders-reconcile';
const SEEDED_AT = new Date('2026-11-02T06:00:00Z');
const DAY = 24 * 60 * 60 * 1000;
const limits = loadConfig({}).limits;

describe.each([
  { seed: 11, orders: 40 },
  { seed: 2026, orders: 150 },
])('seed $seed, $orders orders: the orders csv and the export, reconciled', ({ seed, orders }) => {
  let sandbox: Sandbox;
  let receiver: Server;
  let workDir: string;
  let ordersFile: string;
  let exportFile: string | undefined;
  const arrivals = createArrivals();

  beforeAll(async () => {
    workDir = await mkdtemp(path.join(os.tmpdir(), 'recon-scenario-orders-'));
    receiver = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        const file = path.join(workDir, 'export.csv.gz');
        void writeFile(file, Buffer.concat(chunks)).then(() => {
          exportFile = file;
          arrivals.notify();
          response.writeHead(200).end('OK');
        });
      });
    });
    const receiverUrl = await listenOnLoopback(receiver);
    sandbox = createSandbox({
      identifier: IDENTIFIER,
      secret: SECRET,
      seed,
      seedOrders: orders,
      clock: createSandboxClock({ start: SEEDED_AT, ticking: false }),
      callbackFormat: 'raw',
    });
    ordersFile = path.join(workDir, 'orders.csv');
    await writeFile(ordersFile, formatOrdersCsv(scenarioOrders(sandbox.store, sandbox.scenario!, sandbox.clock.now())));

    const client = createPaymentClient({
      baseUrl: await sandbox.listen(0),
      identifier: IDENTIFIER,
      secret: SECRET,
      timeoutMs: 5_000,
      retry: { attempts: 1, baseDelayMs: 10 },
    });
    const receipt = await client.getTransactions({
      ORDERID: sandbox.scenario!.orderIds,
      COMPRESSION: 'gzip',
      CALLBACKURL: `${receiverUrl}/cb`,
    });
    expect(receipt.EXECCODE).toBe('0000');
    await arrivals.until(() => exportFile !== undefined);
  });

  afterAll(async () => {
    await sandbox?.close();
    if (receiver) await closeServer(receiver);
    await rm(workDir, { recursive: true, force: true });
  });

  describe.each(BACKENDS)('on %s', (backend) => {
    const skip = backend === 'postgres' && !hasPostgres;
    let testDb: TestDatabase;
    beforeAll(async () => {
      if (skip) return;
      testDb = await createTestDatabase(backend);
      const [imported] = await importOrderFiles(testDb.database, [ordersFile], { limits });
      const kept = scenarioOrders(sandbox.store, sandbox.scenario!, SEEDED_AT).filter((order) => order.order).length;
      expect(imported).toMatchObject({ status: 'loaded', rows: kept, inserted: kept, rejected: 0 });
      const [ingested] = await ingestFiles(testDb.database, [exportFile!], { timezone: 'UTC', limits });
      expect(ingested).toMatchObject({
        status: 'loaded',
        compression: 'gzip',
        rows: sandbox.store.all().length,
        rejected: 0,
      });
    });
    afterAll(async () => testDb?.drop());

    async function verdictsAt(asOf: Date): Promise<Record<string, string>> {
      const run = await reconcile(testDb.database, {
        scope: { kind: 'all' },
        asOf,
        toleranceMinor: 0n,
        graceHours: 24,
      });
      const rows = await testDb.database.db
        .selectFrom(await runVerdicts(testDb.database.db, run.runId))
        .select(['order_id', 'status'])
        .execute();
      expect(run.ordersInScope).toBe(rows.length);
      return Object.fromEntries(rows.map((row) => [row.order_id, row.status]));
    }

    function expectedAt(asOf: Date): Record<string, string> {
      return Object.fromEntries(
        scenarioOrders(sandbox.store, sandbox.scenario!, asOf).flatMap(({ orderId, expected }) =>
          expected ? [[orderId, expected]] : [],
        ),
      );
    }

    it.skipIf(skip)(
      "gives every order the expected verdict at the sandbox clock's reading: each kind once at least, most matched",
      async () => {
        const expected = expectedAt(SEEDED_AT);
        expect(await verdictsAt(SEEDED_AT)).toEqual(expected);

        const statuses = Object.values(expected);
        expect(new Set(statuses)).toEqual(
          new Set([
            'matched',
            'pending',
            'unknown_order',
            'currency_mismatch',
            'duplicate_payment',
            'status_mismatch',
            'amount_mismatch',
            'approval_expired',
            'capture_expired',
            'capture_at_risk',
            'missing_at_provider',
          ]),
        );
        expect(statuses.filter((status) => status === 'matched').length).toBeGreaterThan(statuses.length / 2);
        // Young orders of both kinds: the money in is matched at once, the money awaited (no approval wait either) is
        // pending.
        const young = scenarioOrders(sandbox.store, sandbox.scenario!, SEEDED_AT).filter(
          ({ order }) => order && SEEDED_AT.getTime() - order.createdAt.getTime() < DAY,
        );
        const codes = (orderId: string) => sandbox.store.byOrderId(orderId).map((transaction) => transaction.execCode);
        expect(young.some(({ orderId, expected }) => expected === 'matched' && codes(orderId).includes('0000'))).toBe(
          true,
        );
        expect(
          young.some(
            ({ orderId, expected }) =>
              expected === 'pending' && !codes(orderId).some((code) => code === '0000' || code === '0003'),
          ),
        ).toBe(true);
      },
    );

    it.skipIf(skip)('keeps agreeing as the orders age: 2, 8 and 30 days later', async () => {
      for (const days of [2, 8, 30]) {
        const asOf = new Date(SEEDED_AT.getTime() + days * DAY);
        expect(await verdictsAt(asOf), `${days} days later`).toEqual(expectedAt(asOf));
      }
      // The ages did move verdicts: a closing capture window has closed, no order waits in its grace period any more.
      const later = Object.values(expectedAt(new Date(SEEDED_AT.getTime() + 8 * DAY)));
      expect(later).not.toContain('capture_at_risk');
      expect(later).not.toContain('pending');
    });
  });
});
