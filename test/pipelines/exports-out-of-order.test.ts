import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startReconServices, type ReconServices } from '../../pipelines/nightly/recon-services.ts';
import { createPaymentClient } from '../../src/client/payment-client.ts';
import { loadConfig } from '../../src/config/config.ts';
import { createMetricsRegistry } from '../../src/metrics/metrics-registry.ts';
import { issueExportToken } from '../../src/receive/export-token.ts';
import { syncAccounts } from '../../src/reconcile/sync-accounts.ts';
import { send } from '../receive/receiver-harness.ts';
import { waitUntil } from '../support/wait-until.ts';
import { BACKENDS, createTestDatabase, hasPostgres, type TestDatabase } from '../support/test-database.ts';

const ACCOUNT = { identifier: 'shop-a', secret: 'secret-a' };
const HEADER = 'IDENTIFIER;TRANSACTIONID;ORDERID;OPERATIONTYPE;AMOUNT;CURRENCY;EXECCODE';
const row = (execCode: string, amount = '50.00') => `shop-a;TA1;ORD-A1;payment;${amount};EUR;${execCode}`;

/**
 * Exports arrive out of order: a delivery held up on its way comes after the export recon asked for again. The
 * older one never writes over what the newer one wrote: the transaction stays as the export asked for last says,
 * and the older file counts the row as outdated. Through recon serve's receiver and a worker, on a loopback socket.
 */
describe.each(BACKENDS)('exports delivered out of order, on %s', (backend) => {
  const skip = backend === 'postgres' && !hasPostgres;
  let testDb: TestDatabase;
  let services: ReconServices;

  beforeAll(async () => {
    if (skip) return;
    testDb = await createTestDatabase(backend);
    await syncAccounts(testDb.database.db, [
      { identifier: ACCOUNT.identifier, group: undefined, paymentMethods: undefined },
    ]);
    const config = loadConfig({});
    services = await startReconServices({
      database: testDb.database,
      heartbeatSeconds: 10,
      receiver: {
        host: '127.0.0.1',
        port: 0,
        accounts: [ACCOUNT],
        maxFileBytes: config.limits.maxFileBytes,
        metrics: createMetricsRegistry(),
      },
      worker: {
        accounts: [
          {
            identifier: ACCOUNT.identifier,
            client: createPaymentClient({
              baseUrl: 'http://127.0.0.1:9',
              ...ACCOUNT,
              timeoutMs: 1_000,
              retry: { attempts: 1, baseDelayMs: 10 },
            }),
          },
        ],
        nightly: config.nightly,
        reconcile: config.reconcile,
        ingest: { timezone: 'UTC', limits: config.limits },
        pollingIntervalSeconds: 0.5,
      },
    });
  });
  afterAll(async () => {
    await services?.close({ graceful: true });
    await testDb?.drop();
  });

  /** A request for ORD-A1 sent at `sentAt`, its token, ready for a delivery. */
  async function request(sentAt: string) {
    const db = testDb.database.db;
    const issued = await issueExportToken(db, {
      callbackBaseUrl: services.callbackBaseUrl,
      compression: 'gzip',
      nightlyRunId: null,
      expiresAt: new Date(Date.now() + 3_600_000),
      identifier: ACCOUNT.identifier,
      scope: 'CLIENT',
      orderIds: ['ORD-A1'],
    });
    await db
      .updateTable('recon.export_requests')
      .set({ sent_at: new Date(sentAt) })
      .where('request_id', '=', issued.requestId)
      .execute();
    return issued;
  }

  /** Delivers `rows` on the request's token and waits for its ingest; the file's counts. */
  async function deliver(issued: Awaited<ReturnType<typeof request>>, rows: string[]) {
    const db = testDb.database.db;
    const answer = await send(issued.callbackUrl, {
      headers: { 'content-type': 'application/gzip' },
      body: gzipSync(`${HEADER}\n${rows.join('\n')}\n`),
    });
    expect(answer).toMatchObject({ status: 200, text: 'OK' });
    const delivery = await waitUntil(`the ingest of request ${issued.requestId}`, () =>
      db
        .selectFrom('recon.deliveries')
        .select(['state', 'file_id'])
        .where('request_id', '=', issued.requestId)
        .where('state', '<>', 'received')
        .executeTakeFirst(),
    );
    expect(delivery.state).toBe('ingested');
    return db
      .selectFrom('recon.files')
      .select(['rows_total', 'rows_inserted', 'rows_updated', 'rows_unchanged', 'rows_outdated', 'asked_at'])
      .where('file_id', '=', delivery.file_id!)
      .executeTakeFirstOrThrow();
  }

  const stored = () =>
    testDb.database.db
      .selectFrom('recon.transactions')
      .select(['amount_minor', 'exec_code'])
      .where('transaction_id', '=', 'TA1')
      .executeTakeFirst();

  it.skipIf(skip)('an export asked for earlier and delivered later leaves what the later one wrote', async () => {
    const first = await request('2026-11-20T02:00:00Z');
    const again = await request('2026-11-20T03:00:00Z');
    // The export asked for again arrives first: the service revised the payment meanwhile.
    expect(await deliver(again, [row('4001')])).toMatchObject({ rows_inserted: 1, rows_outdated: 0 });
    expect(await deliver(first, [row('0000')])).toMatchObject({
      rows_total: 1,
      rows_inserted: 0,
      rows_updated: 0,
      rows_unchanged: 0,
      rows_outdated: 1,
      asked_at: new Date('2026-11-20T02:00:00Z'),
    });
    expect(await stored()).toEqual({ amount_minor: '5000', exec_code: '4001' });
    // An export asked for later still writes.
    expect(await deliver(await request('2026-11-20T04:00:00Z'), [row('0000', '49.00')])).toMatchObject({
      rows_updated: 1,
      rows_outdated: 0,
    });
    expect(await stored()).toEqual({ amount_minor: '4900', exec_code: '0000' });
  });
});
