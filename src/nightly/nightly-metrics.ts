import { sql, type Kysely } from 'kysely';
import type { PgBoss } from 'pg-boss';
import type { Schema } from '../db/schema.ts';
import type { MetricsRegistry } from '../metrics/metrics-registry.ts';
import { QUEUES } from '../queue/job-queue.ts';

/**
 * What the worker and the nightly runs add to /metrics: rows ingested and rejected (counted here as jobs finish),
 * and, read from the database at each scrape, the queue's depth and the run lag (seconds since the last nightly
 * run that reconciled; what an alert on a stalled nightly watches).
 */
export function registerNightlyMetrics(registry: MetricsRegistry, db: Kysely<Schema>, boss: PgBoss) {
  const rows = registry.counter('recon_rows_ingested_total', 'Export rows ingested from deliveries, by outcome (loaded or rejected).');
  rows.inc({ outcome: 'loaded' }, 0);
  rows.inc({ outcome: 'rejected' }, 0);
  registry.gaugeFromCallback('recon_queue_depth', 'Jobs waiting in the queue, by queue.', async () => {
    const samples = [];
    for (const name of Object.values(QUEUES)) {
      const queue = await boss.getQueue(name);
      samples.push({ labels: { queue: name }, value: queue?.queuedCount ?? 0 });
    }
    return samples;
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
    ingested(counts: { loaded: number; rejected: number }) {
      rows.inc({ outcome: 'loaded' }, counts.loaded);
      rows.inc({ outcome: 'rejected' }, counts.rejected);
    },
  };
}
