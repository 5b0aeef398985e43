import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PgBoss } from 'pg-boss';
import { createMetricsRegistry, type MetricsRegistry } from '../../src/metrics/metrics-registry.ts';
import { registerNightlyMetrics } from '../../src/nightly/nightly-metrics.ts';
import { openJobQueue, QUEUES } from '../../src/queue/job-queue.ts';
import { BACKENDS, createTestDatabase, hasPostgres, type TestDatabase } from '../support/test-database.ts';

describe.each(BACKENDS)('/metrics of the worker and the nightly runs on %s', (backend) => {
  const skip = backend === 'postgres' && !hasPostgres;
  let testDb: TestDatabase;
  let boss: PgBoss;
  let registry: MetricsRegistry;

  // Slots at 02:30 in Paris (01:30 UTC in November); a run is late 6 hours on.
  const lateness = { schedule: '30 2 * * *', timezone: 'Europe/Paris', lateHours: 6 };
  let now = new Date('2026-11-21T09:00:00Z');

  beforeAll(async () => {
    if (skip) return;
    testDb = await createTestDatabase(backend);
    // Installed before the slots the test looks at: a slot before the first migration is never late.
    await testDb.database.db
      .updateTable('recon.schema_migrations')
      .set({ applied_at: new Date('2026-11-01T00:00:00Z') })
      .execute();
    boss = await openJobQueue(testDb.database, { heartbeatSeconds: 10 });
    registry = createMetricsRegistry();
    registerNightlyMetrics(registry, testDb.database.db, lateness, () => now);
  });
  afterAll(async () => {
    await boss?.stop({ graceful: false, close: false });
    await testDb?.drop();
  });

  const sample = (text: string, series: string) => {
    const line = text.split('\n').find((l) => l.startsWith(series + ' '));
    return line === undefined ? undefined : Number(line.slice(series.length + 1));
  };

  it.skipIf(skip)(
    'reads what every process did from the database at each scrape: rows, failures, queue, run lag',
    async () => {
      const db = testDb.database.db;
      let text = await registry.metrics();
      expect(sample(text, `recon_queue_depth{queue="${QUEUES.ingestDelivery}"}`)).toBe(0);
      expect(sample(text, 'recon_nightly_run_lag_seconds')).toBe(-1);
      expect(sample(text, 'recon_nightly_runs_failed')).toBe(0);
      expect(sample(text, 'recon_nightly_runs{state="failed"}')).toBe(0);
      expect(sample(text, 'recon_nightly_latest_run_failed')).toBe(0);
      expect(sample(text, 'recon_nightly_latest_run_suspect')).toBe(0);
      // No run for the slot of 2026-11-21, 7.5 hours ago, but none before it either: a new install is not late.
      expect(sample(text, 'recon_nightly_run_late')).toBe(0);
      expect(sample(text, 'recon_nightly_late_hours')).toBe(6);
      expect(sample(text, 'recon_delivered_rows{outcome="loaded"}')).toBe(0);
      expect(sample(text, 'recon_deliveries_quarantined')).toBe(0);

      // Nobody works these queues here: one job waits, one has run out of retries.
      await boss.send(QUEUES.ingestDelivery, { deliveryId: '1' });
      const doomed = await boss.send(QUEUES.advanceNightlyRun, { nightlyRunId: '1' }, { retryLimit: 0 });
      await boss.fail(QUEUES.advanceNightlyRun, doomed!);
      const finishedAt = new Date(Date.now() - 90_000);
      await db
        .insertInto('recon.nightly_runs')
        .values([
          { run_date: '2026-11-20', as_of: finishedAt, state: 'reconciled', finished_at: finishedAt },
          { run_date: '2026-11-21', as_of: finishedAt, state: 'failed', finished_at: finishedAt },
        ])
        .execute();
      // Two delivered files, as workers leave them: one loaded (12 rows, 2 rejected), one that failed to ingest.
      const files = [
        {
          name: 'delivery-1',
          sha256: 'a'.repeat(64),
          size_bytes: 10,
          compression: 'gzip',
          status: 'loaded',
          rows_total: 12,
          rows_rejected: 2,
        },
        {
          name: 'delivery-2',
          sha256: 'b'.repeat(64),
          size_bytes: 10,
          compression: 'gzip',
          status: 'failed',
          error_code: 'CSV_MALFORMED',
          error: 'delivery-2: line 3: unclosed quote',
        },
      ] as const;
      for (const [index, file] of files.entries()) {
        const request = await db
          .insertInto('recon.export_requests')
          .values({
            token: `metrics${index}tok`,
            order_ids: ['O1'],
            compression: 'gzip',
            state: index === 0 ? 'ingested' : 'failed',
            expires_at: new Date(),
          })
          .returning('request_id')
          .executeTakeFirstOrThrow();
        // The failed one was quarantined: its attempts failed the same way twice.
        const delivery = await db
          .insertInto('recon.deliveries')
          .values({
            request_id: request.request_id,
            sha256: file.sha256,
            bytes: 10,
            state: index === 0 ? 'ingested' : 'failed',
            quarantined_at: index === 0 ? null : new Date(),
            failed_at: index === 0 ? null : new Date(),
          })
          .returning('delivery_id')
          .executeTakeFirstOrThrow();
        const { file_id } = await db
          .insertInto('recon.files')
          .values({ ...file, arrival: 'delivery', delivery_id: delivery.delivery_id })
          .returning('file_id')
          .executeTakeFirstOrThrow();
        await db
          .updateTable('recon.deliveries')
          .set({ file_id })
          .where('delivery_id', '=', delivery.delivery_id)
          .execute();
      }

      text = await registry.metrics();
      expect(sample(text, `recon_queue_depth{queue="${QUEUES.ingestDelivery}"}`)).toBe(1);
      expect(sample(text, `recon_jobs_failed{queue="${QUEUES.advanceNightlyRun}"}`)).toBe(1);
      expect(sample(text, 'recon_nightly_run_lag_seconds')).toBeGreaterThanOrEqual(90);
      expect(sample(text, 'recon_nightly_runs_failed')).toBe(1);
      expect(sample(text, 'recon_nightly_runs{state="failed"}')).toBe(1);
      expect(sample(text, 'recon_nightly_runs{state="reconciled"}')).toBe(1);
      expect(sample(text, 'recon_nightly_runs{state="waiting"}')).toBe(0);
      expect(sample(text, 'recon_nightly_latest_run_failed')).toBe(1);
      // The slot's run, 2026-11-21, failed: an alert of its own, not a late one.
      expect(sample(text, 'recon_nightly_run_late')).toBe(0);
      expect(sample(text, 'recon_delivered_rows{outcome="loaded"}')).toBe(10);
      expect(sample(text, 'recon_delivered_rows{outcome="rejected"}')).toBe(2);
      expect(sample(text, 'recon_deliveries_failed')).toBe(1);
      expect(sample(text, 'recon_deliveries_quarantined')).toBe(1);
    },
  );

  it.skipIf(skip)(
    "says whether the latest finished run was suspect, and whether the latest slot's run is late",
    async () => {
      const db = testDb.database.db;
      const { run_id } = await db
        .insertInto('recon.reconciliation_runs')
        .values({
          as_of: new Date('2026-11-22T01:30:00Z'),
          scope: JSON.stringify({ kind: 'all' }),
          tolerance_minor: '0',
          grace_hours: 24,
          suspect: true,
          suspect_reason: 'no transaction at all',
          kind: 'nightly',
          description: 'nightly run 2026-11-22',
        })
        .returning('run_id')
        .executeTakeFirstOrThrow();
      await db
        .insertInto('recon.nightly_runs')
        .values({
          run_date: '2026-11-22',
          as_of: new Date('2026-11-22T01:30:00Z'),
          state: 'reconciled',
          reconciliation_run_id: run_id,
          finished_at: new Date('2026-11-22T03:00:00Z'),
        })
        .execute();
      now = new Date('2026-11-22T09:00:00Z');
      let text = await registry.metrics();
      expect(sample(text, 'recon_nightly_latest_run_failed')).toBe(0);
      expect(sample(text, 'recon_nightly_latest_run_suspect')).toBe(1);
      expect(sample(text, 'recon_nightly_run_late')).toBe(0);

      // The next night's run started but is still waiting for its exports 6 hours after its slot.
      await db
        .insertInto('recon.nightly_runs')
        .values({
          run_date: '2026-11-23',
          as_of: new Date('2026-11-23T01:30:00Z'),
          state: 'waiting',
          started_at: new Date('2026-11-23T01:30:00Z'),
        })
        .execute();
      now = new Date('2026-11-23T07:29:00Z');
      expect(sample(await registry.metrics(), 'recon_nightly_run_late')).toBe(0);
      now = new Date('2026-11-23T07:31:00Z');
      text = await registry.metrics();
      expect(sample(text, 'recon_nightly_run_late')).toBe(1);
      // An unfinished run is neither failed nor suspect: the latest finished one is what those say.
      expect(sample(text, 'recon_nightly_latest_run_suspect')).toBe(1);
    },
  );
});
