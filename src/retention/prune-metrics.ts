import type { Kysely } from 'kysely';
import type { Schema } from '../db/schema.ts';
import type { MetricsRegistry } from '../metrics/metrics-registry.ts';
import { scrapeGauge } from '../metrics/scrape-gauge.ts';
import { lastPruneFinished } from './prune-records.ts';

/**
 * recon_prune_last_success_timestamp_seconds, read from recon.prunes at each scrape: whichever process pruned (one
 * recon serve a day, or recon prune), every recon serve reports it, and a rule can alert when it grows old.
 */
export function registerPruneMetrics(registry: MetricsRegistry, db: Kysely<Schema>): void {
  scrapeGauge(registry, {
    name: 'recon_prune_last_success_timestamp_seconds',
    help: "When the latest prune finished (recon serve's daily one, or recon prune), in seconds since the epoch; 0 before the first.",
    read: async () => ((await lastPruneFinished(db))?.getTime() ?? 0) / 1000,
  });
}
