import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { announceWorker, liveWorkers, PRESENCE_LAPSE_MS } from '../../src/queue/worker-presence.ts';
import { describeWorkerNotice, NOT_TAKEN_NOTICE_MS, workerNotice } from '../../src/nightly/worker-notice.ts';
import { BACKENDS, createTestDatabase, hasPostgres, type TestDatabase } from '../support/test-database.ts';

describe.each(BACKENDS)('worker presence on %s', (backend) => {
  const skip = backend === 'postgres' && !hasPostgres;
  let testDb: TestDatabase;
  beforeAll(async () => {
    if (!skip) testDb = await createTestDatabase(backend);
  });
  afterAll(async () => {
    await testDb?.drop();
  });

  it.skipIf(skip)('a worker is live from its start until it stops, or until its beats lapse', async () => {
    const db = testDb.database.db;
    const start = new Date('2026-11-26T07:00:00Z');
    expect(await liveWorkers(db, start)).toEqual({ count: 0, lastSeenAt: null });
    const presence = await announceWorker(db, { now: () => start });
    expect(await liveWorkers(db, start)).toEqual({ count: 1, lastSeenAt: start });
    // Not seen for longer than the lapse: gone, though its row says when it was last seen.
    const later = new Date(start.getTime() + PRESENCE_LAPSE_MS + 1);
    expect(await liveWorkers(db, later)).toEqual({ count: 0, lastSeenAt: start });
    await presence.stop();
    expect(await liveWorkers(db, start)).toEqual({ count: 0, lastSeenAt: null });
  });

  it.skipIf(skip)("a crashed worker's row goes when another starts a day later", async () => {
    const db = testDb.database.db;
    const crashed = new Date('2026-11-20T07:00:00Z');
    await announceWorker(db, { now: () => crashed }); // never stopped: a crash
    const nextDay = new Date(crashed.getTime() + 25 * 3_600_000);
    const next = await announceWorker(db, { now: () => nextDay });
    const rows = await db.selectFrom('recon.workers').select('worker_id').execute();
    expect(rows.map((row) => row.worker_id)).toEqual([next.workerId]);
    await next.stop();
  });
});

describe('what recon nightly --wait says about workers', () => {
  const none = { count: 0, lastSeenAt: null };
  const two = { count: 2, lastSeenAt: new Date('2026-11-26T07:00:00Z') };

  it('says at once that none runs, whatever the run is doing, until it ends', () => {
    for (const state of ['requesting', 'waiting', 'reconciling'] as const)
      expect(workerNotice(state, 0, none)).toBe('no-worker');
    expect(workerNotice('reconciled', 0, none)).toBeUndefined();
    expect(workerNotice('failed', 0, none)).toBeUndefined();
    expect(describeWorkerNotice('no-worker', none)).toContain('start `recon serve`');
  });

  it('says after 30 s that running workers have not taken the run', () => {
    expect(workerNotice('requesting', NOT_TAKEN_NOTICE_MS - 1, two)).toBeUndefined();
    expect(workerNotice('requesting', NOT_TAKEN_NOTICE_MS, two)).toBe('not-taken');
    expect(workerNotice('waiting', NOT_TAKEN_NOTICE_MS * 10, two)).toBeUndefined();
    expect(describeWorkerNotice('not-taken', two)).toMatch(/^no worker has taken the run in 30 s though 2 worker/);
  });
});
