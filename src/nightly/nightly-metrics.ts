import { sql, type Kysely } from 'kysely';
import type { Schema } from '../db/schema.ts';
import type { MetricsRegistry } from '../metrics/metrics-registry.ts';
import { QUEUE_SCHEMA, QUEUES } from '../queue/job-queue.ts';
import { latestCallbackProbe } from './callback-probe.ts';

/**
 * What the workers and the nightly runs add to /metrics, read from the database at each scrape: the work is done
 * by any number of `recon worker` processes that serve no HTTP, so what they did is counted where they leave it,
 * and every `recon serve` reports the same figures for the whole deployment.
 * - recon_delivered_rows{outcome}: rows of delivered exports loaded and rejected;
 * - recon_deliveries_failed: delivered files that failed to ingest (their batch is asked for again), and
 *   recon_deliveries_quarantined: those of them given up after two attempts that died or failed the same way;
 * - recon_queue_depth{queue}, recon_jobs_failed{queue}: jobs waiting, and jobs whose retries ran out;
 * - recon_nightly_run_lag_seconds: since the last nightly run that reconciled (what an alert on a stalled nightly
 *   watches), and recon_nightly_runs_failed;
 * - recon_callback_base_reachable{callback_base}: the latest probe of the callback base (callback-probe.ts).
 */
export function registerNightlyMetrics(registry: MetricsRegistry, db: Kysely<Schema>): void {
  registry.gaugeFromCallback(
    'recon_delivered_rows',
    'Rows of delivered exports ingested, by outcome (loaded or rejected).',
    async () => {
      const totals = await db
        .selectFrom('recon.deliveries as d')
        .innerJoin('recon.files as f', 'f.file_id', 'd.file_id')
        .select([
          sql<string>`coalesce(sum(f.rows_total - f.rows_rejected), 0)::text`.as('loaded'),
          sql<string>`coalesce(sum(f.rows_rejected), 0)::text`.as('rejected'),
        ])
        .where('f.status', '=', 'loaded')
        .executeTakeFirstOrThrow();
      return [
        { labels: { outcome: 'loaded' }, value: Number(totals.loaded) },
        { labels: { outcome: 'rejected' }, value: Number(totals.rejected) },
      ];
    },
  );
  registry.gaugeFromCallback('recon_deliveries_failed', 'Delivered export files that failed to ingest.', async () => {
    const { failed } = await db
      .selectFrom('recon.deliveries')
      .select((eb) => eb.fn.countAll<string>().as('failed'))
      .where('state', '=', 'failed')
      .executeTakeFirstOrThrow();
    return Number(failed);
  });
  registry.gaugeFromCallback(
    'recon_deliveries_quarantined',
    'Delivered export files given up after two attempts that died or failed the same way.',
    async () => {
      const { quarantined } = await db
        .selectFrom('recon.deliveries')
        .select((eb) => eb.fn.countAll<string>().as('quarantined'))
        .where('quarantined_at', 'is not', null)
        .executeTakeFirstOrThrow();
      return Number(quarantined);
    },
  );
  // Counted in pg-boss's job table itself: its own queue statistics are a cache refreshed every minute or so, and a
  // scrape should see a job the moment it waits.
  const jobsByQueue = async (states: readonly string[]) => {
    const { rows } = await sql<{ name: string; jobs: number }>`
      SELECT name, count(*)::integer AS jobs FROM ${sql.table(`${QUEUE_SCHEMA}.job`)}
      WHERE state::text IN (${sql.join(states)}) GROUP BY name`.execute(db);
    const counted = new Map(rows.map((row) => [row.name, row.jobs]));
    return Object.values(QUEUES).map((name) => ({ labels: { queue: name }, value: counted.get(name) ?? 0 }));
  };
  registry.gaugeFromCallback('recon_queue_depth', 'Jobs waiting in the queue (created or to retry), by queue.', () =>
    jobsByQueue(['created', 'retry']),
  );
  registry.gaugeFromCallback(
    'recon_jobs_failed',
    'Jobs whose retries ran out, by queue (kept for a week by the queue).',
    () => jobsByQueue(['failed']),
  );
  registry.gaugeFromCallback(
    'recon_nightly_run_lag_seconds',
    'Seconds since the last nightly run that reconciled (-1: none yet).',
    async () => {
      const {
        rows: [latest],
      } = await sql<{ lag: number | null }>`
      SELECT extract(epoch FROM now() - max(finished_at))::float8 AS lag FROM recon.nightly_runs WHERE state = 'reconciled'`.execute(
        db,
      );
      return latest?.lag ?? -1;
    },
  );
  registry.gaugeFromCallback(
    'recon_callback_base_reachable',
    "Whether the latest probe of RECON_CALLBACK_BASE_URL reached recon's receiver (1) or not (0); absent before the first.",
    async () => {
      const probe = await latestCallbackProbe(db);
      return probe ? [{ labels: { callback_base: probe.callbackBaseUrl }, value: probe.reachable ? 1 : 0 }] : [];
    },
  );
  registry.gaugeFromCallback('recon_nightly_runs_failed', 'Nightly runs that failed.', async () => {
    const { failed } = await db
      .selectFrom('recon.nightly_runs')
      .select((eb) => eb.fn.countAll<string>().as('failed'))
      .where('state', '=', 'failed')
      .executeTakeFirstOrThrow();
    return Number(failed);
  });
}
