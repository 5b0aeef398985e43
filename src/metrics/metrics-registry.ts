import {
  formatMetrics,
  isLabelName,
  isMetricName,
  type Labels,
  type MetricFamily,
  type Sample,
} from './prometheus-text.ts';

/**
 * The metrics one `recon serve` process exposes on /metrics. Each part counts what it does on counters and gauges
 * it registers here; a value that lives elsewhere (the queue's depth in the database, the lag of the last run) is a
 * gauge whose callback is evaluated at every scrape, so it is never stale.
 */
export interface Counter {
  /** Adds `by` (default 1; 0 makes a series visible before its first event) to the series of `labels`. */
  inc(labels?: Labels, by?: number): void;
}

export interface Gauge {
  set(value: number, labels?: Labels): void;
}

export type GaugeCollector = () => number | readonly Sample[] | Promise<number | readonly Sample[]>;

export interface MetricsRegistry {
  /** The counter of that name, created on first use: parts built separately may count on the same one. */
  counter(name: string, help: string): Counter;
  /** A gauge read by `collect` at scrape time: one value, or one per label set. */
  gaugeFromCallback(name: string, help: string, collect: GaugeCollector): void;
  /** Every metric in Prometheus text format; rejects, naming the metric, when a callback fails. */
  expose(): Promise<string>;
}

interface Registered {
  readonly help: string;
  readonly type: 'counter' | 'gauge';
  /** Series by their sorted labels; absent for a callback gauge. */
  readonly series?: Map<string, { labels: Labels; value: number }>;
  readonly collect?: GaugeCollector;
  readonly handle?: Counter | Gauge;
}

export function createMetricsRegistry(): MetricsRegistry {
  const metrics = new Map<string, Registered>();

  function register(name: string, entry: Registered): Registered {
    if (!isMetricName(name)) throw new Error(`invalid metric name ${JSON.stringify(name)}`);
    const existing = metrics.get(name);
    if (existing === undefined) {
      metrics.set(name, entry);
      return entry;
    }
    if (existing.type !== entry.type || existing.collect !== undefined || entry.collect !== undefined) {
      throw new Error(`metric ${name} is already registered`);
    }
    return existing;
  }

  function update(
    series: Map<string, { labels: Labels; value: number }>,
    labels: Labels,
    change: (value: number) => number,
  ): void {
    const key = seriesKey(labels);
    const current = series.get(key) ?? { labels: sortedLabels(labels), value: 0 };
    current.value = change(current.value);
    series.set(key, current);
  }

  return {
    counter(name, help) {
      const series = new Map<string, { labels: Labels; value: number }>();
      const handle: Counter = {
        inc(labels = {}, by = 1) {
          if (!(by >= 0)) throw new Error(`counter ${name} cannot go down (inc by ${by})`);
          update(series, labels, (value) => value + by);
        },
      };
      return register(name, { help, type: 'counter', series, handle }).handle as Counter;
    },
    gaugeFromCallback(name, help, collect) {
      register(name, { help, type: 'gauge', collect });
    },
    async expose() {
      const families = await Promise.all(
        [...metrics].map(async ([name, metric]): Promise<MetricFamily> => {
          const samples = metric.series ? [...metric.series.values()] : await collected(name, metric.collect!);
          return { name, help: metric.help, type: metric.type, samples };
        }),
      );
      return formatMetrics(families);
    },
  };
}

async function collected(name: string, collect: GaugeCollector): Promise<readonly Sample[]> {
  try {
    const result = await collect();
    if (typeof result === 'number') return [{ value: result }];
    return result.map((sample) => ({ labels: sortedLabels(sample.labels ?? {}), value: sample.value }));
  } catch (error) {
    throw new Error(`metric ${name}: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
  }
}

function sortedLabels(labels: Labels): Labels {
  for (const name of Object.keys(labels))
    if (!isLabelName(name)) throw new Error(`invalid label name ${JSON.stringify(name)}`);
  return Object.fromEntries(Object.entries(labels).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

function seriesKey(labels: Labels): string {
  return JSON.stringify(Object.entries(sortedLabels(labels)));
}
