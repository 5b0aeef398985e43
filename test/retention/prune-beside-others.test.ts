import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ingestDelivery } from '../../pipelines/nightly/ingest-delivery.ts';
import { loadConfig } from '../../src/config/config.ts';
import type { Database } from '../../src/db/database.ts';
import { openDatabase } from '../../src/db/open-database.ts';
import { prune } from '../../src/retention/prune.ts';
import { holdTransaction, lockWaiters, withApplicationName } from '../support/held-transaction.ts';
import { BACKENDS, createTestDatabase, hasPostgres, type TestDatabase } from '../support/test-database.ts';
import { waitUntil } from '../support/wait-until.ts';
import { exportFile, startDeliveredFiles, storedChunks, type DeliveredFiles } from './delivered-files.ts';

const INGEST = { timezone: 'UTC', limits: loadConfig({}).limits };
const DAY = 86_400_000;
const RETENTION = { deliveryDays: 90, failedDeliveryDays: 30, runDays: 800 };

/**
 * A prune goes beside whatever else runs: each batch takes its deliveries FOR NO KEY UPDATE SKIP LOCKED in a short
 * transaction of its own. On PostgreSQL the others are real sessions, their transactions held open at a known point
 * (held-transaction.ts), never timed; the prune must finish while they still hold, or the test times out.
 */
describe.skipIf(!hasPostgres)('a prune beside other sessions (PostgreSQL)', () => {
  let testDb: TestDatabase;
  let files: DeliveredFiles;
  let databaseUrl: string;
  let serial = 0;

  beforeAll(async () => {
    testDb = await createTestDatabase('postgres');
    databaseUrl = testDb.env.DATABASE_URL!;
    files = await startDeliveredFiles(testDb.database);
  });
  afterAll(async () => {
    await files?.close();
    await testDb?.drop();
  });

  const now = () => new Date();
  const old = () => new Date(Date.now() - 120 * DAY);
  /** A delivery ingested 120 days ago: due for pruning. */
  const oldIngested = async () => {
    const id = await files.deliverAndIngest(exportFile(`T-${++serial}`));
    await files.age(id, { receivedAt: old(), finishedAt: old() });
    return id;
  };
  /** A delivery whose bad file failed its ingest 40 days ago: due for pruning after the 30 days of failed ones. */
  const oldFailed = async () => {
    const id = await files.deliverAndIngest(exportFile(`T-${++serial}`).subarray(0, 20));
    const failedAt = new Date(Date.now() - 40 * DAY);
    await files.age(id, { receivedAt: failedAt, finishedAt: failedAt, failedAt });
    return id;
  };
  const chunks = async (id: string) => (await storedChunks(testDb.database, id)).chunks;
  const run = (database: Database = testDb.database, batchSize = 100) =>
    prune(database.db, { retention: RETENTION, now: now(), dryRun: false, batchSize });

  it('skips a delivery whose row another transaction holds, without waiting for it, and takes it next time', async () => {
    const held = await oldIngested();
    const free = await oldIngested();
    // As an ingest attempt holds its delivery (delivery-attempts.ts), or as the ingest records its outcome.
    const holder = await holdTransaction(databaseUrl, [
      `SELECT delivery_id FROM recon.deliveries WHERE delivery_id = ${held} FOR UPDATE`,
    ]);
    try {
      const report = await run();
      expect(report.deliveries.deliveries).toBe(1);
      expect({ held: await chunks(held), free: await chunks(free) }).toEqual({ held: 1, free: 0 });
    } finally {
      await holder.release();
    }
    expect((await run()).deliveries.deliveries).toBe(1);
    expect(await chunks(held)).toBe(0);
  });

  it('a reference being written to the delivery (a file row, its foreign key check) neither blocks nor skips it', async () => {
    const referenced = await oldIngested();
    // What the foreign key check of an insert into recon.files takes on the delivery's row.
    const holder = await holdTransaction(databaseUrl, [
      `SELECT delivery_id FROM recon.deliveries WHERE delivery_id = ${referenced} FOR KEY SHARE`,
    ]);
    try {
      expect((await run()).deliveries.deliveries).toBe(1);
      expect(await chunks(referenced)).toBe(0);
    } finally {
      await holder.release();
    }
  });

  it('a delivery whose ingest is under way, its transaction open, is not touched, and the prune does not wait', async () => {
    const due = await oldIngested();
    const ingesting = await files.deliver(exportFile('T-INGESTING-1', 'T-INGESTING-2'));
    // Arrived long ago, as a delivery retried for months would have.
    await files.age(ingesting, { receivedAt: old() });
    // The ingest stops at its merge, inside its open transaction: a session holds the table it writes.
    const holder = await holdTransaction(databaseUrl, ['LOCK TABLE recon.transactions IN SHARE MODE']);
    let ingest: Promise<unknown> | undefined;
    try {
      ingest = ingestDelivery(testDb.database, ingesting, INGEST);
      await waitUntil('the ingest waiting at its merge', async () =>
        (await lockWaiters(testDb.database.db)).some((waiter) => waiter.relation === 'recon.transactions'),
      );
      const report = await run();
      expect(report.deliveries.deliveries).toBe(1);
      expect({ due: await chunks(due), ingesting: await chunks(ingesting) }).toEqual({ due: 0, ingesting: 1 });
    } finally {
      await holder.release();
      await ingest;
    }
    const row = await testDb.database.db
      .selectFrom('recon.deliveries')
      .select(['state', 'bytes_pruned_at'])
      .where('delivery_id', '=', ingesting)
      .executeTakeFirstOrThrow();
    expect(row).toEqual({ state: 'ingested', bytes_pruned_at: null });
    expect(await chunks(ingesting)).toBe(1);
  });

  it('two prunes at once delete the bytes of each failed delivery once, and skip the one another session holds', async () => {
    const due = [];
    for (let i = 0; i < 4; i++) due.push(await oldFailed());
    const held = await oldFailed();
    const holder = await holdTransaction(databaseUrl, [
      `SELECT delivery_id FROM recon.deliveries WHERE delivery_id = ${held} FOR UPDATE`,
    ]);
    const other = await openDatabase({
      databaseUrl: withApplicationName(databaseUrl, 'second-prune'),
      dataDir: '/nonexistent',
    });
    try {
      const [first, second] = await Promise.all([run(testDb.database, 1), run(other, 1)]);
      expect(first.failedDeliveries.deliveries + second.failedDeliveries.deliveries).toBe(4);
      expect(await Promise.all(due.map(chunks))).toEqual([0, 0, 0, 0]);
      expect(await chunks(held)).toBe(1);
    } finally {
      await holder.release();
      await other.close();
    }
    expect((await run()).failedDeliveries.deliveries).toBe(1);
    expect(await chunks(held)).toBe(0);
  });

  it('two prunes at once, on two connections, delete each delivery once between them', async () => {
    const due = [];
    for (let i = 0; i < 6; i++) due.push(await oldIngested());
    const other = await openDatabase({
      databaseUrl: withApplicationName(databaseUrl, 'second-prune'),
      dataDir: '/nonexistent',
    });
    try {
      const [first, second] = await Promise.all([run(testDb.database, 1), run(other, 1)]);
      expect(first.deliveries.deliveries + second.deliveries.deliveries).toBe(6);
      const bytes = await Promise.all(due.map((id) => storedChunks(testDb.database, id)));
      expect(bytes.every((stored) => stored.chunks === 0)).toBe(true);
    } finally {
      await other.close();
    }
  });
});

/** Embedded PGlite has one connection: a prune and an ingest take turns on it, and neither spoils the other. */
describe.each(BACKENDS.filter((backend) => backend === 'pglite'))('a prune beside an ingest on %s', (backend) => {
  let testDb: TestDatabase;
  let files: DeliveredFiles;

  beforeAll(async () => {
    testDb = await createTestDatabase(backend);
    files = await startDeliveredFiles(testDb.database);
  });
  afterAll(async () => {
    await files?.close();
    await testDb?.drop();
  });

  it('prunes the old ingested delivery while another is ingested, and leaves that one whole', async () => {
    const due = await files.deliverAndIngest(exportFile('T-DUE'));
    const long = new Date(Date.now() - 120 * DAY);
    await files.age(due, { receivedAt: long, finishedAt: long });
    const ingesting = await files.deliver(exportFile('T-NOW-1', 'T-NOW-2'));
    await files.age(ingesting, { receivedAt: long });
    const [, report] = await Promise.all([
      ingestDelivery(testDb.database, ingesting, INGEST),
      prune(testDb.database.db, { retention: RETENTION, now: new Date(), dryRun: false }),
    ]);
    expect(report.deliveries.deliveries).toBe(1);
    expect((await storedChunks(testDb.database, due)).chunks).toBe(0);
    expect((await storedChunks(testDb.database, ingesting)).chunks).toBe(1);
    const row = await testDb.database.db
      .selectFrom('recon.deliveries')
      .select('state')
      .where('delivery_id', '=', ingesting)
      .executeTakeFirstOrThrow();
    expect(row.state).toBe('ingested');
  });
});
