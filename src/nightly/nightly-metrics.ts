import { sql, type Kysely } from 'kysely';
import { Gauge } from 'prom-client';
import { NIGHTLY_RUN_STATES, type Schema } from '../db/schema.ts';
import type { MetricsRegistry } from '../metrics/metrics-registry.ts';
import { scrapeGauge } from '../metrics/scrape-gauge.ts';
import { QUEUE_SCHEMA, QUEUES } from '../queue/job-queue.ts';
import { latestCallbackProbe } from './callback-probe.ts';
import { ALERT_HORIZON_DAYS } from '../alerts/nightly-alerts.ts';
import { findLateRuns, type LatenessRule } from './late-run.ts';

/**
 * What the workers and the nightly runs add to /metrics, read from the database at each scrape: the work is done
 * by any number of `recon worker` processes, so what they did is counted where they leave it, and every
 * `recon serve` reports the same figures for the whole deployment (alert rules take the max over instances).
 * - recon_delivered_rows{outcome}: rows of delivered exports loaded and rejected;
 * - recon_deliveries_failed: delivered files that failed to ingest (their batch is asked for again), and
 *   recon_deliveries_quarantined: those of them given up after two attempts that died or failed the same way;
 * - recon_queue_depth{queue}, recon_jobs_failed{queue}: jobs waiting, and jobs whose retries ran out;
 * - recon_nightly_runs{state}, recon_nightly_runs_failed: runs by state;
 * - recon_nightly_run_lag_seconds: since the last nightly run that reconciled;
 * - recon_nightly_latest_run_failed, recon_nightly_latest_run_suspect (of the run that finished last, not the
 *   latest date), recon_nightly_run_late: what the alert rules of deploy/prometheus/alerts.yml watch, each 1 or 0.
 * - recon_callback_base_reachable{callback_base}: the latest probe of the callback base (callback-probe.ts).
 */
export function registerNightlyMetrics(
  registry: MetricsRegistry,
  db: Kysely<Schema>,
  lateness: LatenessRule,
  now: () => Date = () => new Date(),
): void {
  scrapeGauge(registry, {
    name: 'recon_delivered_rows',
    help: 'Rows of delivered exports ingested, by outcome (loaded or rejected).',
    labelNames: ['outcome'],
    read: async () => {
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
  });
  scrapeGauge(registry, {
    name: 'recon_deliveries_failed',
    help: 'Delivered export files that failed to ingest.',
    read: async () => {
      const { failed } = await db
        .selectFrom('recon.deliveries')
        .select((eb) => eb.fn.countAll<string>().as('failed'))
        .where('state', '=', 'failed')
        .executeTakeFirstOrThrow();
      return Number(failed);
    },
  });
  scrapeGauge(registry, {
    name: 'recon_deliveries_quarantined',
    help: 'Delivered export files given up after two attempts that died or failed the same way.',
    read: async () => {
      const { quarantined } = await db
        .selectFrom('recon.deliveries')
        .select((eb) => eb.fn.countAll<string>().as('quarantined'))
        .where('quarantined_at', 'is not', null)
        .executeTakeFirstOrThrow();
      return Number(quarantined);
    },
  });
  // Counted in pg-boss's job table itself: its own queue statistics are a cache refreshed every minute or so, and a
  // scrape should see a job the moment it waits.
  const jobsByQueue = async (states: readonly string[]) => {
    const { rows } = await sql<{ name: string; jobs: number }>`
      SELECT name, count(*)::integer AS jobs FROM ${sql.table(`${QUEUE_SCHEMA}.job`)}
      WHERE state::text IN (${sql.join(states)}) GROUP BY name`.execute(db);
    const counted = new Map(rows.map((row) => [row.name, row.jobs]));
    return Object.values(QUEUES).map((name) => ({ labels: { queue: name }, value: counted.get(name) ?? 0 }));
  };
  scrapeGauge(registry, {
    name: 'recon_queue_depth',
    help: 'Jobs waiting in the queue (created or to retry), by queue.',
    labelNames: ['queue'],
    read: () => jobsByQueue(['created', 'retry']),
  });
  scrapeGauge(registry, {
    name: 'recon_jobs_failed',
    help: 'Jobs whose retries ran out, by queue (kept for a week by the queue).',
    labelNames: ['queue'],
    read: () => jobsByQueue(['failed']),
  });
  scrapeGauge(registry, {
    name: 'recon_nightly_run_lag_seconds',
    help: 'Seconds since the last nightly run that reconciled (-1: none yet).',
    read: async () => {
      const {
        rows: [latest],
      } = await sql<{ lag: number | null }>`
        SELECT extract(epoch FROM now() - max(finished_at))::float8 AS lag
        FROM recon.nightly_runs WHERE state = 'reconciled'`.execute(db);
      return latest?.lag ?? -1;
    },
  });
  scrapeGauge(registry, {
    name: 'recon_callback_base_reachable',
    help: "Whether the latest probe of RECON_CALLBACK_BASE_URL reached recon's receiver (1) or not (0); absent before the first.",
    labelNames: ['callback_base'],
    read: async () => {
      const probe = await latestCallbackProbe(db);
      return probe ? [{ labels: { callback_base: probe.callbackBaseUrl }, value: probe.reachable ? 1 : 0 }] : [];
    },
  });
  const runsByState = async () => {
    const rows = await db
      .selectFrom('recon.nightly_runs')
      .select(['state', (eb) => eb.fn.countAll<string>().as('runs')])
      .groupBy('state')
      .execute();
    return new Map(rows.map((row) => [row.state as string, Number(row.runs)]));
  };
  scrapeGauge(registry, {
    name: 'recon_nightly_runs',
    help: 'Nightly runs by state (requesting, waiting, reconciling, reconciled, failed).',
    labelNames: ['state'],
    read: async () => {
      const counted = await runsByState();
      return NIGHTLY_RUN_STATES.map((state) => ({ labels: { state }, value: counted.get(state) ?? 0 }));
    },
  });
  scrapeGauge(registry, {
    name: 'recon_nightly_runs_failed',
    help: 'Nightly runs that failed (the same as recon_nightly_runs{state="failed"}).',
    read: async () => (await runsByState()).get('failed') ?? 0,
  });
  // The run that finished last, whatever its date: a re-run of an earlier date that fails after a later date's run
  // reconciled is the news, and reading the latest date would hide it.
  const latestFinishedRun = () =>
    db
      .selectFrom('recon.nightly_runs as n')
      .leftJoin('recon.reconciliation_runs as r', 'r.run_id', 'n.reconciliation_run_id')
      .select(['n.state', 'r.suspect'])
      .where('n.state', 'in', ['reconciled', 'failed'])
      .orderBy(sql`coalesce(n.finished_at, n.updated_at)`, 'desc')
      .orderBy('n.nightly_run_id', 'desc')
      .limit(1)
      .executeTakeFirst();
  scrapeGauge(registry, {
    name: 'recon_nightly_latest_run_failed',
    help: 'Whether the nightly run that finished last (by finish time, not date) failed (1) or reconciled (0): an export batch was given up.',
    read: async () => ((await latestFinishedRun())?.state === 'failed' ? 1 : 0),
  });
  scrapeGauge(registry, {
    name: 'recon_nightly_latest_run_suspect',
    help: 'Whether the reconciliation of the nightly run that finished last is suspect (1): orders expect money but no transaction was found.',
    read: async () => ((await latestFinishedRun())?.suspect === true ? 1 : 0),
  });
  scrapeGauge(registry, {
    name: 'recon_nightly_run_late',
    help: 'Whether a nightly run is late (1): unfinished RECON_ALERT_LATE_HOURS after its slot, or missing for a slot that long past.',
    read: async () => {
      const at = now();
      const horizon = new Date(at.getTime() - ALERT_HORIZON_DAYS * 86_400_000);
      return (await findLateRuns(db, lateness, at, horizon)).length > 0 ? 1 : 0;
    },
  });
  new Gauge({
    name: 'recon_nightly_late_hours',
    help: 'RECON_ALERT_LATE_HOURS: hours after its slot from which an unfinished nightly run counts as late.',
    registers: [registry],
  }).set(lateness.lateHours);
}
