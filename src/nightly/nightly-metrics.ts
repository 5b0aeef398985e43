import { sql, type Kysely } from 'kysely';
import type { Schema } from '../db/schema.ts';
import type { MetricsRegistry } from '../metrics/metrics-registry.ts';
import { QUEUE_SCHEMA, QUEUES } from '../queue/job-queue.ts';

/**
 * What the worker and the nightly runs add to /metrics: rows ingested and rejected and jobs failed (counted as jobs end),
 * and, read from the database at each scrape, the queue's depth and the run lag (seconds since the last nightly
 * run that reconciled; what an alert on a stalled nightly watches).
 */
export function registerNightlyMetrics(registry: MetricsRegistry, db: Kysely<Schema>) {
  const rows = registry.counter('recon_rows_ingested_total', 'Export rows ingested from deliveries, by outcome (loaded or rejected).');
  rows.inc({ outcome: 'loaded' }, 0);
  rows.inc({ outcome: 'rejected' }, 0);
  const jobFailures = registry.counter('recon_job_failures_total', 'Jobs that failed (and were handed back for a retry), by queue.');
  for (const name of Object.values(QUEUES)) jobFailures.inc({ queue: name }, 0);
  registry.gaugeFromCallback('recon_queue_depth', 'Jobs waiting in the queue (created or to retry), by queue.', async () => {
    // Counted in pg-boss's job table itself: its own queue statistics are a cache refreshed every minute or so,
    // and a scrape should see a job the moment it waits.
    const { rows: counted } = await sql<{ name: string; waiting: number }>`
      SELECT name, count(*)::integer AS waiting FROM ${sql.table(`${QUEUE_SCHEMA}.job`)}
      WHERE state IN ('created', 'retry') GROUP BY name`.execute(db);
    const waiting = new Map(counted.map((row) => [row.name, row.waiting]));
    return Object.values(QUEUES).map((name) => ({ labels: { queue: name }, value: waiting.get(name) ?? 0 }));
  });
  registry.gaugeFromCallback('recon_nightly_run_lag_seconds', 'Seconds since the last nightly run that reconciled (-1: none yet).', async () => {
    const { rows: [latest] } = await sql<{ lag: number | null }>`
      SELECT extract(epoch FROM now() - max(finished_at))::float8 AS lag FROM recon.nightly_runs WHERE state = 'reconciled'`.execute(db);
    return latest?.lag ?? -1;
  });
  registry.gaugeFromCallback('recon_nightly_runs_failed', 'Nightly runs that failed.', async () => {
    const { rows: [failed] } = await sql<{ count: number }>`SELECT count(*)::integer AS count FROM recon.nightly_runs WHERE state = 'failed'`.execute(db);
    return failed?.count ?? 0;
  });
  return {
    jobFailed(queue: string) {
      jobFailures.inc({ queue });
    },
    ingested(counts: { loaded: number; rejected: number }) {
      rows.inc({ outcome: 'loaded' }, counts.loaded);
      rows.inc({ outcome: 'rejected' }, counts.rejected);
    },
  };
}
