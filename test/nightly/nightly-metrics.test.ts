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
  let metrics: ReturnType<typeof registerNightlyMetrics>;

  beforeAll(async () => {
    if (skip) return;
    testDb = await createTestDatabase(backend);
    boss = await openJobQueue(testDb.database, { heartbeatSeconds: 10 });
    registry = createMetricsRegistry();
    metrics = registerNightlyMetrics(registry, testDb.database.db);
  });
  afterAll(async () => {
    await boss?.stop({ graceful: false, close: false });
    await testDb?.drop();
  });

  const sample = (text: string, series: string) => {
    const line = text.split('\n').find((l) => l.startsWith(series + ' '));
    return line === undefined ? undefined : Number(line.slice(series.length + 1));
  };

  it.skipIf(skip)('reads the queue depth and the run lag at each scrape, and counts rows and failed jobs', async () => {
    let text = await registry.expose();
    expect(sample(text, `recon_queue_depth{queue="${QUEUES.ingestDelivery}"}`)).toBe(0);
    expect(sample(text, 'recon_nightly_run_lag_seconds')).toBe(-1);
    expect(sample(text, 'recon_nightly_runs_failed')).toBe(0);

    // Nobody works this queue here: the job waits, and the scrape sees it.
    await boss.send(QUEUES.ingestDelivery, { deliveryId: '1' });
    const finishedAt = new Date(Date.now() - 90_000);
    await testDb.database.db.insertInto('recon.nightly_runs').values([
      { run_date: '2026-11-20', as_of: finishedAt, state: 'reconciled', finished_at: finishedAt },
      { run_date: '2026-11-21', as_of: finishedAt, state: 'failed', finished_at: finishedAt },
    ]).execute();
    metrics.ingested({ loaded: 10, rejected: 2 });
    metrics.jobFailed(QUEUES.advanceNightlyRun);

    text = await registry.expose();
    expect(sample(text, `recon_queue_depth{queue="${QUEUES.ingestDelivery}"}`)).toBe(1);
    expect(sample(text, 'recon_nightly_run_lag_seconds')).toBeGreaterThanOrEqual(90);
    expect(sample(text, 'recon_nightly_runs_failed')).toBe(1);
    expect(sample(text, 'recon_rows_ingested_total{outcome="loaded"}')).toBe(10);
    expect(sample(text, 'recon_rows_ingested_total{outcome="rejected"}')).toBe(2);
    expect(sample(text, `recon_job_failures_total{queue="${QUEUES.advanceNightlyRun}"}`)).toBe(1);
  });
});
