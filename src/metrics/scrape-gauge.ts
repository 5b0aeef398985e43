import { Gauge, type LabelValues } from 'prom-client';
import type { MetricsRegistry } from './metrics-registry.ts';

export interface ScrapedSample<L extends string> {
  readonly labels: LabelValues<L>;
  readonly value: number;
}

export interface ScrapeGaugeOptions<L extends string> {
  readonly name: string;
  readonly help: string;
  readonly labelNames?: readonly L[];
  /** Read at every scrape: one value, or one per label set (a label set it leaves out disappears). */
  readonly read: () => Promise<number | readonly ScrapedSample<L>[]>;
}

/**
 * A gauge whose value lives elsewhere (the database), read at every scrape so that it is never stale. A read that
 * fails fails the scrape with an error naming the metric: the target shows as down, rather than a metric left out
 * unnoticed.
 */
export function scrapeGauge<L extends string = never>(registry: MetricsRegistry, options: ScrapeGaugeOptions<L>): void {
  const { name, read } = options;
  new Gauge<L>({
    name,
    help: options.help,
    labelNames: options.labelNames ?? [],
    registers: [registry],
    async collect() {
      let result: number | readonly ScrapedSample<L>[];
      try {
        result = await read();
      } catch (error) {
        throw new Error(`metric ${name}: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
      }
      this.reset();
      if (typeof result === 'number') this.set(result);
      else for (const sample of result) this.set(sample.labels, sample.value);
    },
  });
}
