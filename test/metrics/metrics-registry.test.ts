import { describe, expect, it } from 'vitest';
import { createMetricsRegistry } from '../../src/metrics/metrics-registry.ts';
import { formatMetrics } from '../../src/metrics/prometheus-text.ts';

describe('formatMetrics', () => {
  it('writes HELP, TYPE and one line per series, escaping help text and label values', () => {
    const text = formatMetrics([
      {
        name: 'a_total',
        help: 'Counts \\ things\nover lines.',
        type: 'counter',
        samples: [{ labels: { path: 'C:\\x "y"\nz' }, value: 2 }],
      },
      {
        name: 'b',
        help: 'A gauge.',
        type: 'gauge',
        samples: [{ value: 1.5 }, { labels: { k: 'v' }, value: Infinity }, { value: NaN }],
      },
    ]);
    expect(text).toBe(
      [
        '# HELP a_total Counts \\\\ things\\nover lines.',
        '# TYPE a_total counter',
        'a_total{path="C:\\\\x \\"y\\"\\nz"} 2',
        '# HELP b A gauge.',
        '# TYPE b gauge',
        'b 1.5',
        'b{k="v"} +Inf',
        'b NaN',
        '',
      ].join('\n'),
    );
  });
});

describe('createMetricsRegistry', () => {
  it('adds up counters per label set, whatever the order of the labels', async () => {
    const registry = createMetricsRegistry();
    const counter = registry.counter('jobs_total', 'Jobs.');
    counter.inc({ queue: 'ingest', outcome: 'ok' });
    counter.inc({ outcome: 'ok', queue: 'ingest' }, 2);
    counter.inc({ queue: 'ingest', outcome: 'failed' }, 0);
    expect(await registry.expose()).toBe(
      '# HELP jobs_total Jobs.\n# TYPE jobs_total counter\njobs_total{outcome="ok",queue="ingest"} 3\njobs_total{outcome="failed",queue="ingest"} 0\n',
    );
  });

  it('hands out the same counter to a second part that asks for it, and refuses a clash', () => {
    const registry = createMetricsRegistry();
    const first = registry.counter('seen_total', 'Seen.');
    expect(registry.counter('seen_total', 'Seen.')).toBe(first);
    expect(() => registry.gaugeFromCallback('seen_total', 'Seen.', () => 0)).toThrow(
      'metric seen_total is already registered',
    );
    registry.gaugeFromCallback('depth', 'Depth.', () => 1);
    expect(() => registry.gaugeFromCallback('depth', 'Depth.', () => 2)).toThrow('metric depth is already registered');
    expect(() => first.inc({}, -1)).toThrow('counter seen_total cannot go down');
    expect(() => registry.counter('bad-name', 'x')).toThrow('invalid metric name');
    expect(() => first.inc({ __reserved: 'x' })).toThrow('invalid label name');
  });

  it('reads callback gauges at every exposition', async () => {
    const registry = createMetricsRegistry();
    let depth = 7;
    registry.gaugeFromCallback('queue_depth', 'Depth.', async () => [
      { labels: { queue: 'ingest' }, value: depth },
      { labels: { queue: 'export' }, value: 1 },
    ]);
    expect(await registry.expose()).toContain(
      '# HELP queue_depth Depth.\n# TYPE queue_depth gauge\nqueue_depth{queue="ingest"} 7\nqueue_depth{queue="export"} 1\n',
    );
    depth = 0;
    expect(await registry.expose()).toContain('queue_depth{queue="ingest"} 0\n');
  });

  it('rejects an exposition whose callback fails, naming the metric', async () => {
    const registry = createMetricsRegistry();
    registry.gaugeFromCallback('lag_seconds', 'Lag.', () => {
      throw new Error('no run yet');
    });
    await expect(registry.expose()).rejects.toThrow('metric lag_seconds: no run yet');
  });
});
