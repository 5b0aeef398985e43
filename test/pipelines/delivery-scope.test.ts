import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startReconServices, type ReconServices } from '../../pipelines/nightly/recon-services.ts';
import { createPaymentClient } from '../../src/client/payment-client.ts';
import { loadConfig } from '../../src/config/config.ts';
import type { ExportScope } from '../../src/db/schema.ts';
import { createLogger } from '../../src/log/create-logger.ts';
import { createMetricsRegistry } from '../../src/metrics/metrics-registry.ts';
import { ACCOUNT_NOT_ASKED, ORDERID_NOT_ASKED } from '../../src/normalize/row-scope.ts';
import { issueExportToken } from '../../src/receive/export-token.ts';
import { syncAccounts } from '../../src/reconcile/sync-accounts.ts';
import { memoryStream } from '../log/memory-stream.ts';
import { send } from '../receive/receiver-harness.ts';
import { parseLogRecords } from '../support/log-records.ts';
import { waitUntil } from '../support/wait-until.ts';
import { BACKENDS, createTestDatabase, hasPostgres, type TestDatabase } from '../support/test-database.ts';

/** Two accounts of their own, and a group of two exported together. */
const ACCOUNTS: readonly { identifier: string; secret: string; group?: string }[] = [
  { identifier: 'shop-a', secret: 'secret-a' },
  { identifier: 'shop-b', secret: 'secret-b' },
  { identifier: 'shop-g1', secret: 'secret-g1', group: 'pair' },
  { identifier: 'shop-g2', secret: 'secret-g2', group: 'pair' },
];
const HEADER = 'IDENTIFIER;TRANSACTIONID;ORDERID;OPERATIONTYPE;AMOUNT;CURRENCY;EXECCODE';
const B_PAYMENT = 'shop-b;TB1;ORD-B1;payment;932.48;EUR;0000';

/**
 * A delivery on a token writes only what the token's request asked for, whoever posts it: through recon serve's
 * receiver over a loopback socket and a worker's ingest, one account's token cannot change another account's
 * transaction, nor load money of an account recon does not know. What it may not write is a rejected row of its
 * file, with its reason, and counted.
 */
describe.each(BACKENDS)('what a delivery on a token may write, on %s', (backend) => {
  const skip = backend === 'postgres' && !hasPostgres;
  let testDb: TestDatabase;
  let services: ReconServices;
  const logs = memoryStream();
  /** B's transaction as B's own export, on B's token, left it. */
  let bAsExported: NonNullable<Awaited<ReturnType<typeof transaction>>>;

  beforeAll(async () => {
    if (skip) return;
    testDb = await createTestDatabase(backend);
    await syncAccounts(
      testDb.database.db,
      ACCOUNTS.map(({ identifier, group }) => ({ identifier, group, paymentMethods: undefined })),
    );
    const config = loadConfig({});
    services = await startReconServices({
      database: testDb.database,
      heartbeatSeconds: 10,
      log: createLogger({ level: 'info', stream: logs, name: 'recon test' }),
      receiver: {
        host: '127.0.0.1',
        port: 0,
        accounts: ACCOUNTS.map(({ identifier, secret }) => ({ identifier, secret })),
        maxFileBytes: config.limits.maxFileBytes,
        metrics: createMetricsRegistry(),
      },
      worker: {
        // No nightly run here: the service is never asked.
        accounts: ACCOUNTS.map(({ identifier, secret, group }) => ({
          identifier,
          group,
          client: createPaymentClient({
            baseUrl: 'http://127.0.0.1:9',
            identifier,
            secret,
            timeoutMs: 1_000,
            retry: { attempts: 1, baseDelayMs: 10 },
          }),
        })),
        nightly: config.nightly,
        reconcile: config.reconcile,
        ingest: { timezone: 'UTC', limits: config.limits },
        pollingIntervalSeconds: 0.5,
      },
    });
    // B's own export, on B's token: the transaction the forged rows below aim at.
    const own = await deliver({ identifier: 'shop-b', scope: 'CLIENT', orderIds: ['ORD-B1'] }, [B_PAYMENT]);
    expect(own.file).toMatchObject({ status: 'loaded', rows_inserted: 1, rows_rejected: 0 });
    bAsExported = (await transaction('TB1'))!;
    expect(bAsExported).toMatchObject({
      identifier: 'shop-b',
      order_id: 'ORD-B1',
      amount_minor: '93248',
      exec_code: '0000',
    });
  });
  afterAll(async () => {
    await services?.close({ graceful: true });
    await testDb?.drop();
  });

  /**
   * Posts a gzip csv of `rows` to a new token of `request` and waits for a worker to ingest it; its delivery's
   * state, its file's counts and rejected rows.
   */
  async function deliver(
    request: { identifier: string; scope: ExportScope; orderIds: string[] },
    rows: string[],
    header = HEADER,
  ) {
    const db = testDb.database.db;
    const issued = await issueExportToken(db, {
      callbackBaseUrl: services.callbackBaseUrl,
      compression: 'gzip',
      nightlyRunId: null,
      expiresAt: new Date(Date.now() + 3_600_000),
      ...request,
    });
    const answer = await send(issued.callbackUrl, {
      headers: { 'content-type': 'application/gzip' },
      body: gzipSync(`${header}\n${rows.join('\n')}\n`),
    });
    expect(answer).toMatchObject({ status: 200, text: 'OK' });
    const delivery = await waitUntil(`the ingest of the delivery of request ${issued.requestId}`, () =>
      db
        .selectFrom('recon.deliveries')
        .select(['delivery_id', 'state', 'file_id', 'failure'])
        .where('request_id', '=', issued.requestId)
        .where('state', '<>', 'received')
        .executeTakeFirst(),
    );
    expect(delivery).toMatchObject({ state: 'ingested', failure: null });
    const file = await db
      .selectFrom('recon.files')
      .select(['status', 'rows_total', 'rows_inserted', 'rows_updated', 'rows_rejected'])
      .where('file_id', '=', delivery.file_id!)
      .executeTakeFirstOrThrow();
    const rejected = await db
      .selectFrom('recon.rejected_rows')
      .select(['line', 'raw', 'reason'])
      .where('file_id', '=', delivery.file_id!)
      .orderBy('line')
      .execute();
    return { deliveryId: delivery.delivery_id, file, rejected };
  }

  const transaction = (transactionId: string) =>
    testDb.database.db
      .selectFrom('recon.transactions as t')
      .innerJoin('recon.files as f', 'f.file_id', 't.file_id')
      .select(['t.identifier', 't.order_id', 't.amount_minor', 't.exec_code', 'f.name'])
      .where('t.transaction_id', '=', transactionId)
      .executeTakeFirst();
  it.skipIf(skip)(
    "rejects a row of account B posted to a token of account A, and B's transaction stays as B's export left it",
    async () => {
      const forged = 'shop-b;TB1;ORD-B1;payment;1.00;EUR;4001';
      const unknown = 'shop-evil;TE1;ORD-B1;payment;500.00;EUR;0000';
      const { deliveryId, file, rejected } = await deliver(
        { identifier: 'shop-a', scope: 'CLIENT', orderIds: ['ORD-A1', 'ORD-B1'] },
        ['shop-a;TA1;ORD-A1;payment;10.00;EUR;0000', forged, unknown],
      );
      expect(await transaction('TB1')).toEqual(bAsExported);
      expect(await transaction('TE1')).toBeUndefined();
      expect(await transaction('TA1')).toMatchObject({ identifier: 'shop-a', amount_minor: '1000' });
      expect(file).toEqual({
        status: 'loaded',
        rows_total: 3,
        rows_inserted: 1,
        rows_updated: 0,
        rows_rejected: 2,
      });
      expect(rejected).toEqual([
        { line: 3, raw: forged, reason: ACCOUNT_NOT_ASKED },
        { line: 4, raw: unknown, reason: ACCOUNT_NOT_ASKED },
      ]);
      // The worker's summary of the ingest says so too.
      const record = parseLogRecords(logs.text()).find(
        (each) => each.msg === 'delivery ingested' && each.delivery === deliveryId,
      );
      expect(record).toMatchObject({ rows: 3, inserted: 1, rejected: 2 });
    },
  );

  it.skipIf(skip)(
    "rejects a row that names the token's account, or none, with another account's TRANSACTIONID",
    async () => {
      const relabelled = 'shop-a;TB1;ORD-B1;payment;1.00;EUR;4001';
      const unnamed = ';TB1;ORD-B1;payment;1.00;EUR;4001';
      const named = await deliver({ identifier: 'shop-a', scope: 'CLIENT', orderIds: ['ORD-B1'] }, [relabelled]);
      const blank = await deliver({ identifier: 'shop-a', scope: 'CLIENT', orderIds: ['ORD-B1'] }, [unnamed]);
      // A file without the IDENTIFIER column: its rows go through the account of its token, which TB1 is not.
      const noColumn = await deliver(
        { identifier: 'shop-a', scope: 'CLIENT', orderIds: ['ORD-B1'] },
        ['TB1;ORD-B1;payment;1.00;EUR;4001'],
        'TRANSACTIONID;ORDERID;OPERATIONTYPE;AMOUNT;CURRENCY;EXECCODE',
      );
      for (const [delivered, raw] of [
        [named, relabelled],
        [blank, unnamed],
        [noColumn, 'TB1;ORD-B1;payment;1.00;EUR;4001'],
      ] as const) {
        expect(delivered.file).toMatchObject({ status: 'loaded', rows_total: 1, rows_updated: 0, rows_rejected: 1 });
        expect(delivered.rejected).toEqual([{ line: 2, raw, reason: ACCOUNT_NOT_ASKED }]);
      }
      expect(await transaction('TB1')).toEqual(bAsExported);
    },
  );

  it.skipIf(skip)('rejects a row of an ORDERID the request did not name', async () => {
    const other = 'shop-a;TA2;ORD-A2;payment;20.00;EUR;0000';
    const none = 'shop-a;TA3;;payment;30.00;EUR;0000';
    const { file, rejected } = await deliver({ identifier: 'shop-a', scope: 'CLIENT', orderIds: ['ORD-A1'] }, [
      'shop-a;TA1;ORD-A1;payment;10.00;EUR;0000',
      other,
      none,
    ]);
    expect(file).toMatchObject({ status: 'loaded', rows_total: 3, rows_rejected: 2 });
    expect(rejected).toEqual([
      { line: 3, raw: other, reason: ORDERID_NOT_ASKED },
      { line: 4, raw: none, reason: ORDERID_NOT_ASKED },
    ]);
    expect(await transaction('TA2')).toBeUndefined();
    expect(await transaction('TA3')).toBeUndefined();
  });

  it.skipIf(skip)(
    "takes the rows of every account of a group's export, and rejects another account's and those naming none",
    async () => {
      const outsider = 'shop-b;TB1;ORD-B1;payment;1.00;EUR;4001';
      const unnamed = ';TG3;ORD-G1;payment;3.00;EUR;0000';
      const { file, rejected } = await deliver(
        { identifier: 'shop-g1', scope: 'CLIENTSGROUP', orderIds: ['ORD-G1', 'ORD-B1'] },
        ['shop-g1;TG1;ORD-G1;payment;1.00;EUR;0000', 'shop-g2;TG2;ORD-G1;payment;2.00;EUR;0000', outsider, unnamed],
      );
      expect(file).toMatchObject({ status: 'loaded', rows_total: 4, rows_inserted: 2, rows_rejected: 2 });
      expect(rejected).toEqual([
        { line: 4, raw: outsider, reason: ACCOUNT_NOT_ASKED },
        { line: 5, raw: unnamed, reason: ACCOUNT_NOT_ASKED },
      ]);
      expect(await transaction('TG1')).toMatchObject({ identifier: 'shop-g1' });
      expect(await transaction('TG2')).toMatchObject({ identifier: 'shop-g2' });
      expect(await transaction('TG3')).toBeUndefined();
      expect(await transaction('TB1')).toEqual(bAsExported);
    },
  );
});
