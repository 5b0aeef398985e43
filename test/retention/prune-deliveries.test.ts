import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { buffer } from 'node:stream/consumers';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ingestDelivery } from '../../pipelines/nightly/ingest-delivery.ts';
import { ingestFiles } from '../../pipelines/ingest-files.ts';
import { loadConfig } from '../../src/config/config.ts';
import { endFailedAttempt, startIngestAttempt } from '../../src/nightly/delivery-attempts.ts';
import { openStoredDelivery } from '../../src/receive/open-stored-delivery.ts';
import { spoolDelivery } from '../../src/receive/spool-delivery.ts';
import { prune, type PruneOptions } from '../../src/retention/prune.ts';
import { readView, utcText } from '../reporting/reporting-seed.ts';
import { expectReconError } from '../support/expect-recon-error.ts';
import { BACKENDS, createTestDatabase, hasPostgres, type TestDatabase } from '../support/test-database.ts';
import { exportFile, startDeliveredFiles, storedChunks, type DeliveredFiles } from './delivered-files.ts';

const INGEST = { timezone: 'UTC', limits: loadConfig({}).limits };
const NOW = new Date('2027-03-01T12:00:00Z');
const DAY = 86_400_000;
/** 90 days before NOW is 2026-12-01T12:00Z: before it is old, after it recent. */
const OLD = new Date('2026-10-01T08:00:00Z');
const RECENT = new Date('2027-02-20T08:00:00Z');
/** 30 days before NOW is 2027-01-30T12:00Z: a delivery that failed before it loses its bytes. */
const FAILED_LONG_AGO = new Date('2027-01-10T08:00:00Z');
const RETENTION = { deliveryDays: 90, failedDeliveryDays: 30, runDays: 800 };

/**
 * Retention of delivered bytes on real deliveries: posted to a receiver, stored in chunks, ingested by the worker's
 * code, then dated. A prune deletes the chunks of the old ingested ones and of those that failed long ago (a bad
 * file, a quarantined one), nothing else, and keeps every row.
 */
describe.each(BACKENDS)('pruning delivered bytes on %s', (backend) => {
  const skip = backend === 'postgres' && !hasPostgres;
  let testDb: TestDatabase;
  let files: DeliveredFiles;
  let scratch: string;
  /** Old and ingested: the one to prune. */
  let oldIngested: string;
  let recentIngested: string;
  /** Old, stored, never ingested (state received: waiting for its ingest). */
  let oldReceived: string;
  /** Failed to ingest (a corrupt file) more than 30 days ago. */
  let oldFailed: string;
  /** Quarantined (its attempts failed the same way twice) more than 30 days ago. */
  let oldQuarantined: string;
  /** Arrived long ago, failed to ingest (a corrupt file) less than 30 days ago. */
  let recentFailed: string;
  /** The old one's bytes again, delivered recently: its file is the old one's. */
  let recentDuplicate: string;
  let oldBytes: number;
  let ingestedFileId: string;

  beforeAll(async () => {
    if (skip) return;
    testDb = await createTestDatabase(backend);
    files = await startDeliveredFiles(testDb.database);
    scratch = await mkdtemp(path.join(os.tmpdir(), 'recon-prune-'));
    oldIngested = await files.deliverAndIngest(exportFile('T-OLD-1', 'T-OLD-2'));
    await files.age(oldIngested, { receivedAt: OLD, finishedAt: new Date(OLD.getTime() + 60_000) });
    recentIngested = await files.deliverAndIngest(exportFile('T-NEW-1'));
    await files.age(recentIngested, { receivedAt: RECENT, finishedAt: RECENT });
    oldReceived = await files.deliver(exportFile('T-WAITING'));
    await files.age(oldReceived, { receivedAt: OLD });
    oldFailed = await files.deliverAndIngest(exportFile('T-BROKEN').subarray(0, 20));
    await files.age(oldFailed, { receivedAt: OLD, finishedAt: OLD, failedAt: FAILED_LONG_AGO });
    oldQuarantined = await files.deliver(exportFile('T-KILLER'));
    for (let attempt = 0; attempt < 2; attempt++) {
      await startIngestAttempt(testDb.database.db, oldQuarantined);
      await endFailedAttempt(testDb.database.db, oldQuarantined, 'the same failure', false);
    }
    await files.age(oldQuarantined, { receivedAt: OLD, failedAt: FAILED_LONG_AGO });
    recentFailed = await files.deliverAndIngest(exportFile('T-BROKEN-TOO').subarray(0, 30));
    await files.age(recentFailed, { receivedAt: OLD, finishedAt: RECENT, failedAt: RECENT });
    recentDuplicate = await files.deliverAndIngest(exportFile('T-OLD-1', 'T-OLD-2'));
    await files.age(recentDuplicate, { receivedAt: RECENT });
    oldBytes = (await storedChunks(testDb.database, oldIngested)).bytes;
    // A file given to recon ingest: recon never kept its bytes.
    const csv = path.join(scratch, 'by-hand.csv');
    await writeFile(
      csv,
      'TRANSACTIONID;ORDERID;OPERATIONTYPE;AMOUNT;CURRENCY;EXECCODE\nT-HAND;O-HAND;payment;1.00;EUR;0000\n',
    );
    const [ingested] = await ingestFiles(testDb.database, [csv], INGEST);
    ingestedFileId = ingested!.fileId!;
  });
  afterAll(async () => {
    await files?.close();
    await testDb?.drop();
    if (scratch) await rm(scratch, { recursive: true, force: true });
  });

  const run = (options: Partial<PruneOptions> = {}) =>
    prune(testDb.database.db, { retention: RETENTION, now: NOW, dryRun: false, ...options });

  const deliveryRows = () =>
    testDb.database.db
      .selectFrom('recon.deliveries')
      .select(['delivery_id', 'state', 'sha256', 'bytes', 'file_id', 'failure', 'failed_at', 'bytes_pruned_at'])
      .orderBy('delivery_id')
      .execute();
  const chunksOf = async (...ids: string[]) =>
    Object.fromEntries(
      await Promise.all(ids.map(async (id) => [id, (await storedChunks(testDb.database, id)).chunks] as const)),
    );
  const prunes = () => testDb.database.db.selectFrom('recon.prunes').selectAll().execute();

  it.skipIf(skip)('sets the scene: each delivery in the state its name says', async () => {
    const states = Object.fromEntries((await deliveryRows()).map((row) => [String(row.delivery_id), row.state]));
    expect(states).toEqual({
      [oldIngested]: 'ingested',
      [recentIngested]: 'ingested',
      [oldReceived]: 'received',
      [oldFailed]: 'failed',
      [oldQuarantined]: 'failed',
      [recentFailed]: 'failed',
      [recentDuplicate]: 'ingested',
    });
    expect(oldBytes).toBeGreaterThan(0);
    const quarantined = await testDb.database.db
      .selectFrom('recon.deliveries')
      .select(['quarantined_at', 'failure'])
      .where('delivery_id', '=', oldQuarantined)
      .executeTakeFirstOrThrow();
    expect(quarantined.quarantined_at).not.toBeNull();
    expect(quarantined.failure).toMatch(/^quarantined after 2 attempts failing the same way/);
  });

  it.skipIf(skip)('a dry run reports what a prune would delete and changes nothing', async () => {
    const before = {
      rows: await deliveryRows(),
      chunks: await chunksOf(oldIngested, recentIngested, oldFailed, oldQuarantined),
    };
    const failedBytes =
      (await storedChunks(testDb.database, oldFailed)).bytes +
      (await storedChunks(testDb.database, oldQuarantined)).bytes;
    const report = await run({ dryRun: true });
    expect(report).toEqual({
      dryRun: true,
      deliveries: { retentionDays: 90, cutoff: new Date(NOW.getTime() - 90 * DAY), deliveries: 1, bytes: oldBytes },
      failedDeliveries: {
        retentionDays: 30,
        cutoff: new Date(NOW.getTime() - 30 * DAY),
        deliveries: 2,
        bytes: failedBytes,
      },
      runs: {
        retentionDays: 800,
        cutoff: new Date(NOW.getTime() - 800 * DAY),
        runs: 0,
        verdictVersions: 0,
        runTotals: 0,
        scopeOrders: 0,
      },
    });
    expect(await deliveryRows()).toEqual(before.rows);
    expect(await chunksOf(oldIngested, recentIngested, oldFailed, oldQuarantined)).toEqual(before.chunks);
    expect(await prunes()).toEqual([]);
  });

  it.skipIf(skip)(
    'deletes the bytes of the old ingested delivery and of those that failed long ago only, as the dry run said',
    async () => {
      const before = await deliveryRows();
      const transactionsBefore = await testDb.database.db
        .selectFrom('recon.transactions')
        .select(['transaction_id', 'file_id', 'line'])
        .orderBy('transaction_id')
        .execute();
      const report = await run();
      expect(report.deliveries).toMatchObject({ deliveries: 1, bytes: oldBytes });
      expect(report.failedDeliveries).toMatchObject({ deliveries: 2 });
      expect(
        await chunksOf(
          oldIngested,
          recentIngested,
          oldReceived,
          oldFailed,
          oldQuarantined,
          recentFailed,
          recentDuplicate,
        ),
      ).toEqual({
        [oldIngested]: 0,
        [recentIngested]: 1,
        [oldReceived]: 1,
        [oldFailed]: 0,
        [oldQuarantined]: 0,
        [recentFailed]: 1,
        [recentDuplicate]: 1,
      });
      // Every row stays as it was, a failed one's failure too, the pruned ones' with the instant their bytes went.
      const pruned = new Set([oldIngested, oldFailed, oldQuarantined]);
      expect(await deliveryRows()).toEqual(
        before.map((row) => (pruned.has(String(row.delivery_id)) ? { ...row, bytes_pruned_at: NOW } : row)),
      );
      expect(
        await testDb.database.db
          .selectFrom('recon.transactions')
          .select(['transaction_id', 'file_id', 'line'])
          .orderBy('transaction_id')
          .execute(),
      ).toEqual(transactionsBefore);
      expect(transactionsBefore.map((row) => row.transaction_id)).toContain('T-OLD-1');
    },
  );

  it.skipIf(skip)("reporting.files says which files' bytes were pruned, and when", async () => {
    const rows = await testDb.database.transaction((c) => readView(c, 'files', 'file_id'));
    const byDelivery = (deliveryId: string) => rows.find((row) => row.delivery_id === deliveryId);
    expect(byDelivery(oldIngested)).toMatchObject({
      arrival: 'delivery',
      status: 'loaded',
      size_bytes: String(oldBytes),
      bytes_pruned: true,
      bytes_pruned_at: utcText(NOW),
    });
    expect(byDelivery(recentIngested)).toMatchObject({ bytes_pruned: false, bytes_pruned_at: null });
    expect(rows.find((row) => row.file_id === ingestedFileId)).toMatchObject({
      arrival: 'ingest',
      bytes_pruned: null,
      bytes_pruned_at: null,
    });
  });

  it.skipIf(skip)('a second prune finds nothing more to delete', async () => {
    const report = await run();
    expect(report.deliveries).toMatchObject({ deliveries: 0, bytes: 0 });
    expect(report.failedDeliveries).toMatchObject({ deliveries: 0, bytes: 0 });
  });

  it.skipIf(skip)(
    'whatever wants pruned bytes fails with DELIVERY_PRUNED in one line, and the ingest does not try',
    async () => {
      const said = `the bytes of delivery ${oldIngested} were pruned on 2027-03-01 after RECON_DELIVERY_RETENTION_DAYS`;
      expect(await expectReconError(() => openStoredDelivery(testDb.database.db, oldIngested), 'DELIVERY_PRUNED')).toBe(
        said,
      );
      expect(await expectReconError(() => spoolDelivery(testDb.database.db, oldIngested), 'DELIVERY_PRUNED')).toBe(
        said,
      );
      // A failed delivery names its own retention.
      expect(await expectReconError(() => openStoredDelivery(testDb.database.db, oldFailed), 'DELIVERY_PRUNED')).toBe(
        `the bytes of delivery ${oldFailed} were pruned on 2027-03-01 after RECON_FAILED_DELIVERY_RETENTION_DAYS`,
      );
      const before = await deliveryRows();
      // An ingest job for them again (a retry, a sweep): ingested or failed already, so nothing is read.
      await ingestDelivery(testDb.database, oldIngested, INGEST);
      await ingestDelivery(testDb.database, oldFailed, INGEST);
      expect(await deliveryRows()).toEqual(before);
    },
  );

  it.skipIf(skip)(
    'bytes pruned while a reader streams them fail the stream with DELIVERY_PRUNED, not DELIVERY_CORRUPT',
    async () => {
      const stored = await openStoredDelivery(testDb.database.db, recentIngested);
      // Long after: the recent one is past its retention too.
      const later = new Date(RECENT.getTime() + 91 * DAY);
      expect((await run({ now: later })).deliveries.deliveries).toBeGreaterThanOrEqual(1);
      await expectReconError(
        () => buffer(stored.content),
        'DELIVERY_PRUNED',
        `the bytes of delivery ${recentIngested} were pruned on ${later.toISOString().slice(0, 10)}`,
      );
      // Still never the received one, however old; the failed one is past its own retention by then.
      expect(await chunksOf(oldReceived, recentFailed)).toEqual({ [oldReceived]: 1, [recentFailed]: 0 });
    },
  );

  it.skipIf(skip)(
    'works through many deliveries in batches that commit on their own; stopped between two, it keeps what it did',
    async () => {
      const many: string[] = [];
      for (let i = 0; i < 5; i++) {
        const id = await files.deliverAndIngest(exportFile(`T-BATCH-${i}`));
        await files.age(id, { receivedAt: OLD, finishedAt: OLD });
        many.push(id);
      }
      const stop = new AbortController();
      const seen: number[] = [];
      const stopped = run({
        batchSize: 2,
        signal: stop.signal,
        onProgress: (progress) => {
          if (progress.step !== 'deliveries') return;
          seen.push(progress.soFar.deliveries);
          stop.abort(new Error('stopped by the test'));
        },
      });
      await expect(stopped).rejects.toThrow('stopped by the test');
      expect(seen).toEqual([2]);
      const left = Object.values(await chunksOf(...many)).filter((chunks) => chunks > 0);
      expect(left).toHaveLength(3);

      seen.length = 0;
      const report = await run({
        batchSize: 2,
        onProgress: (progress) => {
          if (progress.step === 'deliveries') seen.push(progress.soFar.deliveries);
        },
      });
      expect(report.deliveries.deliveries).toBe(3);
      expect(seen).toEqual([2, 3]);
      expect(Object.values(await chunksOf(...many))).toEqual([0, 0, 0, 0, 0]);
    },
  );
});
