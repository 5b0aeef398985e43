import { collectDefaultMetrics, Registry } from 'prom-client';

/**
 * The metrics one recon process exposes on its admin listener's /metrics: a prom-client Registry made by the
 * command (`recon serve`, `recon worker`) and passed to every part that counts, never prom-client's global one,
 * so that tests can run several in one process. Each part registers its own metrics on it.
 */
export type MetricsRegistry = Registry;

/**
 * A registry holding Node's own process metrics (prom-client's defaults, under their usual names so that stock
 * dashboards read them): CPU, resident memory, heap sizes, event loop lag, garbage collection, open handles.
 */
export function createMetricsRegistry(): MetricsRegistry {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  return registry;
}
