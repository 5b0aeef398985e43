import { dateInZone } from '@recon/protocol';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exportFile, startDeliveredFiles, storedChunks } from '../retention/delivered-files.ts';
import { untilLogged } from '../support/log-records.ts';
import { refusingBaseUrl } from '../support/loopback.ts';
import { BACKENDS, createTestDatabase, hasPostgres, type TestDatabase } from '../support/test-database.ts';
import { listeningUrls, startRecon } from './run-recon.ts';

const DAY = 86_400_000;

/**
 * A real `recon serve` prunes on its own: its first check of the day deletes the bytes of a delivery ingested 120
 * days ago, logs what it removed, records the day, and /metrics says when the prune last succeeded.
 */
describe.each(BACKENDS)('the daily prune of recon serve, on %s', (backend) => {
  const skip = backend === 'postgres' && !hasPostgres;
  let testDb: TestDatabase;
  let due: string;

  beforeAll(async () => {
    if (skip) return;
    testDb = await createTestDatabase(backend);
    const files = await startDeliveredFiles(testDb.database);
    try {
      due = await files.deliverAndIngest(exportFile('T-SERVE-OLD'));
      const long = new Date(Date.now() - 120 * DAY);
      await files.age(due, { receivedAt: long, finishedAt: long });
    } finally {
      await files.close();
    }
    await testDb.close();
  });
  afterAll(async () => testDb?.drop());

  it.skipIf(skip)(
    'prunes at start, logs it, records the day and exports recon_prune_last_success_timestamp_seconds',
    async () => {
      const { baseUrl } = await refusingBaseUrl();
      const started = Date.now();
      const serve = startRecon(['serve'], {
        ...testDb.env,
        RECON_SERVICE_URL: baseUrl,
        RECON_IDENTIFIER: 'PRUNE',
        RECON_SECRET: 'serve-prune-secret',
        RECON_PORT: '0',
        RECON_CALLBACK_BASE_URL: `${baseUrl}/`,
      });
      let pruned;
      let scraped: string;
      try {
        const { adminUrl } = await listeningUrls(serve);
        pruned = await untilLogged(serve, 'the daily prune', (record) => record.msg.startsWith('pruned '), {
          timeoutMs: 60_000,
        });
        scraped = await (await fetch(`${adminUrl}/metrics`)).text();
      } finally {
        serve.child.kill('SIGTERM');
      }
      const result = await serve.done;
      expect(result.code).toBe(0);
      const day = dateInZone(new Date(), 'Europe/Paris');
      expect(pruned).toMatchObject({
        level: 'info',
        name: 'recon serve',
        msg: expect.stringMatching(
          /^pruned the bytes of 1 delivery \(\d+ bytes\) and of 0 failed deliveries \(0 bytes\), and 0 runs$/,
        ),
        day,
        deliveries: 1,
        failedDeliveries: 0,
        failedBytes: 0,
        runs: 0,
      });
      const metric = /^recon_prune_last_success_timestamp_seconds (\S+)$/m.exec(scraped)?.[1];
      expect(Number(metric) * 1000).toBeGreaterThanOrEqual(started - 1000);
      expect(Number(metric) * 1000).toBeLessThanOrEqual(Date.now());

      const database = await testDb.reopen();
      try {
        expect((await storedChunks(database, due)).chunks).toBe(0);
        const prunes = await database.db
          .selectFrom('recon.prunes')
          .select(['started_by', sql<string>`day::text`.as('day'), 'failure'])
          .execute();
        expect(prunes).toEqual([{ started_by: 'schedule', day, failure: null }]);
      } finally {
        await testDb.close();
      }
    },
    90_000,
  );
});
