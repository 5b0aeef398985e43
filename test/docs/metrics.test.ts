import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { createMetricsRegistry } from '../../src/metrics/metrics-registry.ts';
import { packageRoot } from '../../src/package-root.ts';
import { documentedMetrics } from './documented-metrics.ts';
import { readText } from './markdown.ts';
import { productFiles } from './product-files.ts';

const root = packageRoot();

/**
 * The metrics recon's code registers: the `name` of every metric made in a file that makes them with prom-client or
 * scrapeGauge. (A real scrape of `recon serve` checks the same list in test/deploy/deploy-files.test.ts.)
 */
function registeredMetrics(): Map<string, string> {
  const found = new Map<string, string>();
  for (const file of productFiles(root)) {
    const text = readFileSync(path.join(root, file), 'utf8');
    if (!/from '(?:prom-client|[./]+metrics\/scrape-gauge\.ts)'/.test(text)) continue;
    for (const match of text.matchAll(/\bname: '([a-zA-Z_:][a-zA-Z0-9_:]*)'/g)) found.set(match[1]!, file);
  }
  return found;
}

describe('the metrics of docs/operations.md', () => {
  const documented = documentedMetrics(readText(path.join(root, 'docs', 'operations.md')));
  const registered = registeredMetrics();

  it('finds the metrics of the code and of the page', () => {
    expect(registered.size).toBeGreaterThan(20);
    expect(documented.recon.length).toBeGreaterThan(20);
    expect(documented.node.length).toBeGreaterThan(5);
  });

  it('documents every metric the code registers, in a row of its tables', () => {
    const rows = new Set(documented.recon.map((metric) => metric.name));
    expect([...registered].filter(([name]) => !rows.has(name)).map(([name, file]) => `${file}: ${name}`)).toEqual([]);
  });

  it('documents each metric once, and none the code does not register', () => {
    const names = documented.recon.map((metric) => metric.name);
    expect(names.filter((name, index) => names.indexOf(name) !== index)).toEqual([]);
    expect(names.filter((name) => !registered.has(name))).toEqual([]);
  });

  it("names only Node's metrics that prom-client's defaults export", async () => {
    const defaults = new Set((await createMetricsRegistry().getMetricsAsJSON()).map((metric) => metric.name));
    expect(documented.node.filter((name) => !defaults.has(name))).toEqual([]);
  });

  describe('the check itself', () => {
    it("reads the tables' first cells, with or without a type, and Node's metrics in the text", () => {
      const page = [
        '## Metrics',
        '',
        "Node's own: `nodejs_heap_size_used_bytes`, `nodejs_gc_duration_seconds{kind}` and `process_open_fds`.",
        '',
        '| metric | type | what |',
        '|---|---|---|',
        '| `recon_a_total{outcome="x\\|y"}` | counter | a |',
        '',
        '| metric | what |',
        '|---|---|',
        '| `recon_b` | b, as `recon_c` is not |',
        '',
        '## Alerts',
        '',
        '| `recon_d` | not in the section |',
      ].join('\n');
      expect(documentedMetrics(`# Operations\n\n${page}`)).toEqual({
        recon: [
          { name: 'recon_a_total', type: 'counter' },
          { name: 'recon_b', type: undefined },
        ],
        node: ['nodejs_heap_size_used_bytes', 'nodejs_gc_duration_seconds', 'process_open_fds'],
      });
    });
  });
});
