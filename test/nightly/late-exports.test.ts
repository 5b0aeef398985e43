import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatNightlyRun, listNightlyRuns } from '../../src/nightly/nightly-run-report.ts';
import { runRecon } from '../cli/run-recon.ts';
import { BACKENDS, createTestDatabase, hasPostgres, type TestDatabase } from '../support/test-database.ts';

const MINUTE = 60_000;

describe.each(BACKENDS)('late exports of a waiting run on %s', (backend) => {
  const skip = backend === 'postgres' && !hasPostgres;
  let testDb: TestDatabase;
  let nightlyRunId: string;
  const now = new Date();

  beforeAll(async () => {
    if (skip) return;
    testDb = await createTestDatabase(backend);
    const db = testDb.database.db;
    const run = await db
      .insertInto('recon.nightly_runs')
      .values({ run_date: '2026-11-10', state: 'waiting', as_of: now, orders: 3, batches: 3 })
      .returning('nightly_run_id')
      .executeTakeFirstOrThrow();
    nightlyRunId = String(run.nightly_run_id);
    const request = (batch: number, token: string, sentMinutesAgo: number, state: 'requested' | 'ingested') => ({
      token,
      nightly_run_id: nightlyRunId,
      order_ids: [`ORDER-${batch}`],
      compression: 'gzip' as const,
      batch,
      state,
      sent_at: new Date(now.getTime() - sentMinutesAgo * MINUTE),
      expires_at: new Date(now.getTime() + 60 * MINUTE),
    });
    await db
      .insertInto('recon.export_requests')
      .values([
        request(1, 'LateToken0001', 14, 'requested'),
        request(2, 'FreshToken002', 3, 'requested'),
        request(3, 'DoneToken0003', 30, 'ingested'),
      ])
      .execute();
  });
  afterAll(async () => {
    await testDb?.drop();
  });

  it.skipIf(skip)('an export awaited longer than RECON_EXPORT_LATE_SECONDS is late, with its token', async () => {
    const [report] = await listNightlyRuns(testDb.database.db, { nightlyRunId, lateAfterSeconds: 600, now });
    expect(report!.lateExports).toEqual([
      {
        batch: 1,
        attempt: 1,
        token: 'LateToken0001',
        sentAt: new Date(now.getTime() - 14 * MINUTE).toISOString(),
        waitingSeconds: 14 * 60,
      },
    ]);
    expect(formatNightlyRun(report!).split('\n').slice(1)).toEqual([
      `  batch 1 (request 1): export late, awaited 14 min since ${new Date(now.getTime() - 14 * MINUTE).toISOString()} on token LateToken0001`,
    ]);
    // A shorter threshold makes the fresher one late too; the ingested one never is.
    const [sooner] = await listNightlyRuns(testDb.database.db, { nightlyRunId, lateAfterSeconds: 120, now });
    expect(sooner!.lateExports.map((late) => late.token)).toEqual(['LateToken0001', 'FreshToken002']);
  });

  it.skipIf(skip)(
    'recon runs shows it under the run, by RECON_EXPORT_LATE_SECONDS',
    async () => {
      await testDb.close();
      try {
        const shown = await runRecon(['runs'], { ...testDb.env, RECON_EXPORT_LATE_SECONDS: '600' });
        expect(shown.code, shown.stderr).toBe(0);
        expect(shown.stdout).toMatch(
          /\n {2}batch 1 \(request 1\): export late, awaited 14 min since .+ on token LateToken0001\n$/,
        );
        const json = await runRecon(['runs', '--json'], { ...testDb.env, RECON_EXPORT_LATE_SECONDS: '60' });
        const [run] = JSON.parse(json.stdout) as { lateExports: { token: string }[] }[];
        expect(run!.lateExports.map((late) => late.token)).toEqual(['LateToken0001', 'FreshToken002']);
      } finally {
        await testDb.reopen();
      }
    },
    60_000,
  );
});
