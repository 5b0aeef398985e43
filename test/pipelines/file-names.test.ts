import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backfill } from '../../pipelines/backfill.ts';
import type { ExportAccount } from '../../src/client/export-accounts.ts';
import { ingestFiles } from '../../pipelines/ingest-files.ts';
import { loadConfig } from '../../src/config/config.ts';
import { ingestDelivery } from '../../pipelines/nightly/ingest-delivery.ts';
import { startNightlyRun } from '../../src/nightly/nightly-run.ts';
import { EXPORT_COLUMNS } from '@recon/protocol';
import { reconcile } from '../../src/reconcile/reconcile.ts';
import { decodeExplanation, describeTransaction } from '../../src/report/explanation.ts';
import { oldestOpenExceptions } from '../../src/report/report-queries.ts';
import { insertOrders } from '../reconcile/reconcile-scenario.ts';
import { readView } from '../reporting/reporting-seed.ts';
import { multipart, send, startTestReceiver, type TestReceiver } from '../receive/receiver-harness.ts';
import { BACKENDS, createTestDatabase, hasPostgres, type TestDatabase } from '../support/test-database.ts';

const INGEST = { timezone: 'UTC', limits: loadConfig({}).limits };
const BACKFILLED_AT = new Date('2026-11-26T15:00:03.250Z');

/** A service export of one payment per id, `;`-separated: ORDERID `O-<id>`. */
function exportCsv(...ids: string[]): Buffer {
  return Buffer.from(
    `TRANSACTIONID;ORDERID;OPERATIONTYPE;AMOUNT;CURRENCY;EXECCODE\n${ids.map((id) => `${id};O-${id};payment;1.00;EUR;0000\n`).join('')}`,
  );
}

/** A synchronous getTransactions that answers one payment for every ORDERID asked. */
const backfillClient: ExportAccount['client'] = {
  getTransactions: (async (request: { ORDERID: string[] }) =>
    request.ORDERID.map((orderId) => ({
      ...Object.fromEntries(EXPORT_COLUMNS.map((column) => [column, ''])),
      TRANSACTIONID: `BF-${orderId}`,
      ORDERID: orderId,
      OPERATIONTYPE: 'payment',
      AMOUNT: '2.00',
      CURRENCY: 'EUR',
      EXECCODE: '0000',
    }))) as unknown as ExportAccount['client']['getTransactions'],
};

/**
 * Every file is named by what it is, however it arrived: the path given to recon ingest, a backfill's request, a
 * delivery's nightly run, batch, attempt, filename and id; never the temporary path a delivery was read from.
 */
describe.each(BACKENDS)('the names of ingested, backfilled and delivered files on %s', (backend) => {
  const skip = backend === 'postgres' && !hasPostgres;
  let testDb: TestDatabase;
  let receiver: TestReceiver;
  let scratch: string;
  let nightlyRunId: string;

  beforeAll(async () => {
    if (skip) return;
    testDb = await createTestDatabase(backend);
    receiver = await startTestReceiver(testDb.database);
    scratch = await mkdtemp(path.join(os.tmpdir(), 'recon-file-names-'));
    ({
      run: { nightlyRunId },
    } = await startNightlyRun(testDb.database.db, '2026-11-26', new Date()));
  });
  afterAll(async () => {
    await receiver?.close();
    await testDb?.drop();
    if (scratch) await rm(scratch, { recursive: true, force: true });
  });

  /** Delivers `content` on a new request of batch 3, attempt `attempt`, of the run, and ingests it as a worker does. */
  async function deliverAndIngest(
    content: Buffer,
    options: { filename?: string; attempt?: number; nightly?: boolean } = {},
  ): Promise<string> {
    // A delivery writes only the ORDERIDs its request named: those of every export this test delivers.
    const orderIds = ['D1', 'D2', 'R1', 'X1', 'F1', 'F2', 'F3', 'S1'].map((id) => `O-${id}`);
    const issued = await receiver.issue(
      options.nightly === false ? { orderIds } : { orderIds, nightlyRunId, batch: 3, attempt: options.attempt ?? 1 },
    );
    const form =
      options.filename === undefined
        ? undefined
        : multipart([{ name: 'file', value: content, filename: options.filename }]);
    const answer = await send(
      issued.callbackUrl,
      form
        ? { headers: { 'content-type': form.contentType }, body: form.body }
        : { headers: { 'content-type': 'application/gzip' }, body: content },
    );
    expect(answer.status).toBe(200);
    const deliveryId = receiver.delivered.at(-1)!;
    await ingestDelivery(testDb.database, deliveryId, INGEST);
    return deliveryId;
  }

  const delivery = (deliveryId: string) =>
    testDb.database.db
      .selectFrom('recon.deliveries as d')
      .leftJoin('recon.files as f', 'f.file_id', 'd.file_id')
      .select(['d.state', 'd.failure', 'd.file_id', 'f.name', 'f.status', 'f.error'])
      .where('d.delivery_id', '=', deliveryId)
      .executeTakeFirstOrThrow();
  const viewRows = (view: string, orderBy: string) =>
    testDb.database.transaction((connection) => readView(connection, view, orderBy));
  /** When the receiver stored a delivery, and its bytes, as reporting.files writes them (text in a UTC session). */
  const received = (deliveryId: string) =>
    testDb.database.transaction(async (connection) => {
      await connection.query("SET LOCAL TIME ZONE 'UTC'");
      const { rows } = await connection.query<{ received_at: string; sha256: string; bytes: string }>(
        'SELECT received_at::text AS received_at, sha256, bytes::text AS bytes FROM recon.deliveries WHERE delivery_id = $1',
        [deliveryId],
      );
      return rows[0]!;
    });
  const notDelivered = {
    delivery_id: null,
    nightly_run_id: null,
    nightly_run_date: null,
    batch: null,
    batch_attempt: null,
  };

  it.skipIf(skip)(
    'names a delivered file by its nightly run, batch, attempt, filename and delivery, in recon.files and the reporting views',
    async () => {
      const deliveryId = await deliverAndIngest(gzipSync(exportCsv('D1', 'D2')), {
        filename: 'transactions-20261126.csv.gz',
        attempt: 2,
      });
      const name = `nightly 2026-11-26 batch 3 attempt 2: transactions-20261126.csv.gz (delivery ${deliveryId})`;
      const row = await delivery(deliveryId);
      expect(row).toMatchObject({ state: 'ingested', name, status: 'loaded' });

      const files = await viewRows('files', 'file_id');
      const stored = await received(deliveryId);
      expect(files.find((file) => file.file_id === row.file_id)).toMatchObject({
        name,
        sha256: stored.sha256,
        size_bytes: stored.bytes,
        arrival: 'delivery',
        arrived_at: stored.received_at,
        delivery_id: deliveryId,
        nightly_run_id: nightlyRunId,
        nightly_run_date: '2026-11-26',
        batch: 3,
        batch_attempt: 2,
      });
      const transactions = await viewRows('transactions', 'transaction_id');
      expect(
        transactions
          .filter((t) => ['D1', 'D2'].includes(t.transaction_id as string))
          .map((t) => [t.source_file, t.source_file_id]),
      ).toEqual([
        [name, row.file_id],
        [name, row.file_id],
      ]);
      for (const each of [...files, ...transactions]) expect(JSON.stringify(each)).not.toContain(os.tmpdir());

      // recon report names the file an exception's transactions came from the same way.
      await insertOrders(testDb.database, [
        { id: 'O-D1', amount: 500n, status: 'paid', createdAt: new Date(Date.now() - 86_400_000) },
      ]);
      const run = await reconcile(testDb.database, {
        scope: { kind: 'orders', orderIds: ['O-D1'] },
        toleranceMinor: 0n,
        graceHours: 24,
      });
      const [exception] = await oldestOpenExceptions(testDb.database.db, run.runId, 10);
      expect(exception).toMatchObject({ orderId: 'O-D1', status: 'amount_mismatch' });
      expect(decodeExplanation(exception!.explanation).transactions.map(describeTransaction)).toEqual([
        `D1 payment 0000 1.00 EUR (${name}:2)`,
      ]);
    },
  );

  it.skipIf(skip)(
    'names a raw body without a filename, and a request of no nightly run, by what is known of them',
    async () => {
      const raw = await deliverAndIngest(gzipSync(exportCsv('R1')), {});
      expect((await delivery(raw)).name).toBe(`nightly 2026-11-26 batch 3 attempt 1 (delivery ${raw})`);
      const outside = await deliverAndIngest(gzipSync(exportCsv('X1')), { filename: 'x.csv.gz', nightly: false });
      const { request_id } = await testDb.database.db
        .selectFrom('recon.deliveries')
        .select('request_id')
        .where('delivery_id', '=', outside)
        .executeTakeFirstOrThrow();
      expect((await delivery(outside)).name).toBe(`export request ${request_id}: x.csv.gz (delivery ${outside})`);
    },
  );

  it.skipIf(skip)(
    'gives a delivery that fails to ingest the same name, in its failed recon.files row and in the failure it records',
    async () => {
      const truncated = gzipSync(exportCsv('F1', 'F2', 'F3'));
      const deliveryId = await deliverAndIngest(truncated.subarray(0, truncated.length - 12), {
        filename: 'broken.csv.gz',
        attempt: 3,
      });
      const name = `nightly 2026-11-26 batch 3 attempt 3: broken.csv.gz (delivery ${deliveryId})`;
      const row = await delivery(deliveryId);
      expect(row).toMatchObject({
        state: 'failed',
        name,
        status: 'failed',
        error: expect.stringMatching(
          /^nightly 2026-11-26 batch 3 attempt 3: broken\.csv\.gz \(delivery \d+\): truncated or corrupt gzip data/,
        ),
      });
      expect(row.failure).toBe(row.error);
      expect(row.error).not.toContain(os.tmpdir());
      const files = await viewRows('files', 'file_id');
      expect(files.find((file) => file.file_id === row.file_id)).toMatchObject({
        name,
        status: 'failed',
        arrival: 'delivery',
        delivery_id: deliveryId,
        batch: 3,
        batch_attempt: 3,
      });
    },
  );

  it.skipIf(skip)(
    'points a delivery of bytes loaded before at the file that loaded them, and records no file of its own',
    async () => {
      const bytes = gzipSync(exportCsv('S1'));
      const first = await deliverAndIngest(bytes, { filename: 'same.csv.gz', attempt: 4 });
      const filesBefore = await viewRows('files', 'file_id');
      const again = await deliverAndIngest(bytes, { filename: 'same-again.csv.gz', attempt: 5 });
      expect(await delivery(again)).toEqual({ ...(await delivery(first)), state: 'ingested' });
      expect((await delivery(again)).name).toBe(
        `nightly 2026-11-26 batch 3 attempt 4: same.csv.gz (delivery ${first})`,
      );
      expect(await viewRows('files', 'file_id')).toEqual(filesBefore);
    },
  );

  it.skipIf(skip)(
    'names an ingested file by the path given, and a backfilled request by what was asked and when',
    async () => {
      const given = path.join(scratch, 'export-2026-11-25.csv');
      await writeFile(given, exportCsv('I1'));
      const [ingested] = await ingestFiles(testDb.database, [given], INGEST);
      expect(ingested).toMatchObject({ file: given, status: 'loaded' });

      const backfilled = await backfill(testDb.database, [{ identifier: 'NAMES', client: backfillClient }], {
        orderIds: ['ORD-7'],
        batchSize: 200,
        toleranceMinor: 0n,
        graceHours: 24,
        now: () => BACKFILLED_AT,
      });
      const backfillName = 'backfill:getTransactions 2026-11-26T15:00:03Z ORD-7';
      expect(backfilled.requests).toMatchObject([{ file: backfillName, status: 'loaded' }]);

      const files = await viewRows('files', 'file_id');
      const ingestedRow = files.find((file) => file.file_id === ingested!.fileId)!;
      expect(ingestedRow).toMatchObject({
        name: given,
        arrival: 'ingest',
        arrived_at: ingestedRow.received_at,
        ...notDelivered,
      });
      const backfilledRow = files.find((file) => file.file_id === backfilled.requests[0]!.fileId)!;
      expect(backfilledRow).toMatchObject({
        name: backfillName,
        arrival: 'backfill',
        arrived_at: backfilledRow.received_at,
        ...notDelivered,
      });
      const transactions = await viewRows('transactions', 'transaction_id');
      expect(
        transactions
          .filter((t) => ['I1', 'BF-ORD-7'].includes(t.transaction_id as string))
          .map((t) => [t.transaction_id, t.source_file, t.source_file_id]),
      ).toEqual([
        ['BF-ORD-7', backfillName, backfilled.requests[0]!.fileId],
        ['I1', given, ingested!.fileId],
      ]);
    },
  );
});
