import { mkdtemp, readdir, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { sql } from 'kysely';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createPaymentClient } from '../../src/client/payment-client.ts';
import { loadConfig } from '../../src/config/config.ts';
import { createMetricsRegistry } from '../../src/metrics/metrics-registry.ts';
import { ingestDelivery } from '../../pipelines/nightly/ingest-delivery.ts';
import { startReconServices, type ReconServices } from '../../pipelines/nightly/recon-services.ts';
import { QUEUES } from '../../src/queue/job-queue.ts';
import { issueExportToken } from '../../src/receive/export-token.ts';
import { multipart, send, startTestReceiver, type TestReceiver } from '../receive/receiver-harness.ts';
import { BACKENDS, createTestDatabase, hasPostgres, type TestDatabase } from '../support/test-database.ts';
import { waitUntil } from '../support/wait-until.ts';

const INGEST = { timezone: 'UTC', limits: loadConfig({}).limits };

let exports = 0;
/** A gzip export of a few payments, different bytes each time (the same bytes again would be a duplicate). */
function exportGzip(): Buffer {
  const prefix = `TMP${++exports}-`;
  return gzipSync(
    `TRANSACTIONID;ORDERID;AMOUNT;CURRENCY;EXECCODE\n${[1, 2, 3].map((n) => `${prefix}${n};O${n};1.00;EUR;0000\n`).join('')}`,
  );
}

/**
 * A delivery is spooled out of the database to a temporary file for each ingest attempt. Whatever the attempt comes
 * to (a corrupt file, the database failing in the middle of the load, stored bytes that no longer match their
 * sha256, a retry by the job queue), it leaves nothing in the temp folder. The temp folder is one of the test's own
 * (TMPDIR, which os.tmpdir() reads at every call), set once the test database exists.
 */
describe.each(BACKENDS)('the temp folder after deliveries that fail on %s', (backend) => {
  const skip = backend === 'postgres' && !hasPostgres;
  let testDb: TestDatabase;
  let tempFolder: string;
  const tmpdirBefore = process.env.TMPDIR;

  beforeAll(async () => {
    if (skip) return;
    testDb = await createTestDatabase(backend);
    tempFolder = await mkdtemp(path.join(os.tmpdir(), 'recon-temp-files-'));
    process.env.TMPDIR = tempFolder;
    expect(os.tmpdir()).toBe(tempFolder);
  });
  afterAll(async () => {
    if (tmpdirBefore === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = tmpdirBefore;
    await testDb?.drop();
    if (tempFolder) await rm(tempFolder, { recursive: true, force: true });
  });

  const leftInTempFolder = () => readdir(tempFolder, { recursive: true });
  const deliveryRow = (deliveryId: string) =>
    testDb.database.db
      .selectFrom('recon.deliveries')
      .select(['state', 'attempts', 'attempt_open', 'quarantined_at'])
      .where('delivery_id', '=', deliveryId)
      .executeTakeFirstOrThrow();
  /** Fails every insert into recon.transactions (the load's merge or its COPY) with `sqlState`, `times` times. */
  const failLoads = (sqlState: string, times: number) =>
    testDb.database.transaction((c) =>
      c.exec(`
    CREATE SEQUENCE public.load_failures;
    CREATE FUNCTION public.fail_load() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF nextval('public.load_failures') <= ${times} THEN
        RAISE EXCEPTION 'the database failed in the middle of the load' USING ERRCODE = '${sqlState}';
      END IF;
      RETURN NULL;
    END $$;
    CREATE TRIGGER fail_load BEFORE INSERT ON recon.transactions FOR EACH STATEMENT EXECUTE FUNCTION public.fail_load();`),
    );
  const loadsFailed = async () =>
    Number(
      (
        await testDb.database.transaction((c) =>
          c.query<{ n: string }>('SELECT last_value::text AS n FROM public.load_failures'),
        )
      ).rows[0]!.n,
    );
  const stopFailingLoads = () =>
    testDb.database.transaction((c) =>
      c.exec(
        'DROP TRIGGER IF EXISTS fail_load ON recon.transactions; DROP FUNCTION IF EXISTS public.fail_load(); DROP SEQUENCE IF EXISTS public.load_failures; ' +
          'DROP TRIGGER IF EXISTS corrupt_chunk ON recon.delivery_chunks; DROP FUNCTION IF EXISTS public.corrupt_chunk();',
      ),
    );
  /**
   * Stored bytes that do not hash to the delivery's sha256 from the moment they are stored: the chunks of a delivery
   * answering a request for `orderId` are replaced as they are written. A worker may take the delivery's job as soon
   * as it is stored, before a test could change its bytes.
   */
  const corruptWhenStored = (orderId: string) =>
    testDb.database.transaction((c) =>
      c.exec(`
    CREATE FUNCTION public.corrupt_chunk() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF EXISTS (SELECT 1 FROM recon.deliveries d JOIN recon.export_requests r ON r.request_id = d.request_id
                 WHERE d.delivery_id = NEW.delivery_id AND r.order_ids = ARRAY['${orderId}']) THEN
        NEW.data := decode('${exportGzip().toString('hex')}', 'hex');
      END IF;
      RETURN NEW;
    END $$;
    CREATE TRIGGER corrupt_chunk BEFORE INSERT ON recon.delivery_chunks FOR EACH ROW EXECUTE FUNCTION public.corrupt_chunk();`),
    );
  /** Stored bytes that no longer hash to the delivery's sha256. */
  const corruptStoredBytes = (deliveryId: string) =>
    testDb.database.db
      .updateTable('recon.delivery_chunks')
      .set({ data: exportGzip() })
      .where('delivery_id', '=', deliveryId)
      .execute();

  describe('attempt by attempt', () => {
    let receiver: TestReceiver;
    beforeEach(async () => {
      if (skip) return;
      receiver = await startTestReceiver(testDb.database);
    });
    afterEach(async () => {
      await receiver?.close();
      if (!skip) await stopFailingLoads();
    });

    async function deliver(content: Buffer): Promise<string> {
      const issued = await receiver.issue({ orderIds: ['O1', 'O2', 'O3'] });
      const form = multipart([{ name: 'file', value: content, filename: 'export.csv.gz' }]);
      expect(
        (await send(issued.callbackUrl, { headers: { 'content-type': form.contentType }, body: form.body })).status,
      ).toBe(200);
      return receiver.delivered.at(-1)!;
    }

    it.skipIf(skip)('leaves nothing after a corrupt file, which fails its delivery', async () => {
      const truncated = exportGzip();
      const deliveryId = await deliver(truncated.subarray(0, truncated.length - 10));
      await ingestDelivery(testDb.database, deliveryId, INGEST);
      expect(await deliveryRow(deliveryId)).toMatchObject({ state: 'failed', attempts: 1 });
      expect(await leftInTempFolder()).toEqual([]);
    });

    it.skipIf(skip)(
      'leaves nothing after each attempt the database fails mid-load, and after the one that loads',
      async () => {
        const deliveryId = await deliver(exportGzip());
        await failLoads('40001', 2);
        for (let attempt = 1; attempt <= 2; attempt++) {
          await expect(ingestDelivery(testDb.database, deliveryId, INGEST)).rejects.toThrow(
            /the database failed in the middle of the load/,
          );
          expect(await deliveryRow(deliveryId)).toMatchObject({
            state: 'received',
            attempts: attempt,
            attempt_open: false,
          });
          expect(await leftInTempFolder()).toEqual([]);
        }
        await ingestDelivery(testDb.database, deliveryId, INGEST);
        expect(await loadsFailed()).toBe(3);
        expect(await deliveryRow(deliveryId)).toMatchObject({ state: 'ingested', attempts: 3 });
        expect(await leftInTempFolder()).toEqual([]);
      },
    );

    it.skipIf(skip)('leaves nothing after a database error that fails the file for good', async () => {
      const deliveryId = await deliver(exportGzip());
      await failLoads('P0001', 1);
      await ingestDelivery(testDb.database, deliveryId, INGEST);
      expect(await deliveryRow(deliveryId)).toMatchObject({ state: 'failed', attempts: 1 });
      expect(await leftInTempFolder()).toEqual([]);
    });

    it.skipIf(skip)(
      'leaves nothing after each attempt at stored bytes that do not match their sha256, to its quarantine',
      async () => {
        const deliveryId = await deliver(exportGzip());
        await corruptStoredBytes(deliveryId);
        await expect(ingestDelivery(testDb.database, deliveryId, INGEST)).rejects.toThrow(
          /do not match its size .* and sha256/,
        );
        expect(await deliveryRow(deliveryId)).toMatchObject({ state: 'received', attempts: 1 });
        expect(await leftInTempFolder()).toEqual([]);
        await ingestDelivery(testDb.database, deliveryId, INGEST);
        expect(await deliveryRow(deliveryId)).toMatchObject({
          state: 'failed',
          attempts: 2,
          quarantined_at: expect.any(Date),
        });
        expect(await leftInTempFolder()).toEqual([]);
      },
    );
  });

  describe('retried by the job queue', () => {
    let services: ReconServices;
    beforeEach(async () => {
      if (skip) return;
      const config = loadConfig({});
      services = await startReconServices({
        database: testDb.database,
        heartbeatSeconds: 10,
        receiver: {
          host: '127.0.0.1',
          port: 0,
          accounts: [{ identifier: 'TMP', secret: 'temp-files-secret' }],
          maxFileBytes: config.limits.maxFileBytes,
          metrics: createMetricsRegistry(),
        },
        worker: {
          // No nightly run here: the service is never asked for anything.
          accounts: [
            {
              identifier: 'TMP',
              client: createPaymentClient({
                baseUrl: 'http://127.0.0.1:9',
                identifier: 'TMP',
                secret: 'temp-files-secret',
                timeoutMs: 1_000,
                retry: { attempts: 1, baseDelayMs: 10 },
              }),
            },
          ],
          nightly: config.nightly,
          reconcile: config.reconcile,
          ingest: INGEST,
          pollingIntervalSeconds: 0.5,
        },
      });
    });
    afterEach(async () => {
      await services?.close({ graceful: false });
      if (!skip) await stopFailingLoads();
    });

    async function deliver(content: Buffer, orderId = 'O1'): Promise<string> {
      const issued = await issueExportToken(testDb.database.db, {
        callbackBaseUrl: services.callbackBaseUrl,
        orderIds: [orderId],
        compression: 'gzip',
        nightlyRunId: null,
        expiresAt: new Date(Date.now() + 3_600_000),
      });
      expect(
        (await send(issued.callbackUrl, { headers: { 'content-type': 'application/gzip' }, body: content })).status,
      ).toBe(200);
      const { delivery_id } = await testDb.database.db
        .selectFrom('recon.deliveries')
        .select('delivery_id')
        .where('request_id', '=', issued.requestId)
        .executeTakeFirstOrThrow();
      return String(delivery_id);
    }

    it.skipIf(skip)(
      'leaves nothing after a failed job, nor after its retries, until the delivery is ingested or quarantined',
      async () => {
        await failLoads('40001', 1);
        await corruptWhenStored('O-MISMATCH');
        const outage = await deliver(exportGzip());
        const mismatch = await deliver(exportGzip(), 'O-MISMATCH');

        // Both first attempts ended in a failed job, which pg-boss runs again after its retry delay (5-10 s).
        await waitUntil('both first attempts failed', async () =>
          (await Promise.all([outage, mismatch].map(deliveryRow))).every(
            (row) => row.attempts === 1 && !row.attempt_open,
          ),
        );
        expect(await leftInTempFolder()).toEqual([]);

        // The retry delay counted out at once (its row's start_after moved to now): the same retry, handed out by
        // the same polling, without the test waiting out seconds that guard nothing here.
        await waitUntil(
          'the retries ended',
          async () => {
            await sql`UPDATE recon_queue.job SET start_after = now()
              WHERE name = ${QUEUES.ingestDelivery} AND state = 'retry' AND start_after > now()`.execute(
              testDb.database.db,
            );
            return (await deliveryRow(outage)).state === 'ingested' && (await deliveryRow(mismatch)).state === 'failed';
          },
          { timeoutMs: 60_000 },
        );
        expect(await deliveryRow(outage)).toMatchObject({ attempts: 2 });
        expect(await deliveryRow(mismatch)).toMatchObject({ attempts: 2, quarantined_at: expect.any(Date) });
        expect(await leftInTempFolder()).toEqual([]);
      },
      90_000,
    );
  });
});
