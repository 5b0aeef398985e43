import { execFile } from 'node:child_process';
import { accessSync, constants, readFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { packageRoot } from '../../src/package-root.ts';
import { listeningUrls, startRecon, type RunningRecon } from '../cli/run-recon.ts';
import { refusingBaseUrl } from '../support/loopback.ts';
import { createTestDatabase, type TestDatabase } from '../support/test-database.ts';
import { documentedMetrics } from '../docs/documented-metrics.ts';
import { exportedNames, metricNamesIn, metricNamesInTemplateQuery } from './promql-metric-names.ts';

const ALERTS = path.join(packageRoot(), 'deploy', 'prometheus', 'alerts.yml');
const DASHBOARD = path.join(packageRoot(), 'deploy', 'grafana', 'recon.json');
/** Prometheus's own series, which recon does not export: whether a target answered its scrape. */
const PROMETHEUS_OWN = new Set(['up']);

interface Rule {
  readonly alert: string;
  readonly expr: string;
  readonly for?: string;
  readonly labels: Record<string, string>;
  readonly annotations: Record<string, string>;
}

interface RuleFile {
  readonly groups: readonly { readonly name: string; readonly rules: readonly Rule[] }[];
}

interface Panel {
  readonly title: string;
  readonly type: string;
  readonly targets?: readonly { readonly expr: string }[];
  readonly panels?: readonly Panel[];
}

interface Dashboard {
  readonly uid: string;
  readonly title: string;
  readonly panels: readonly Panel[];
  readonly templating: { readonly list: readonly { readonly query?: string | { readonly query: string } }[] };
}

/** Every metric name an alert rule file reads, by the rule that reads it: its expression and its annotations' queries. */
function metricsOfRules(file: RuleFile): Map<string, string[]> {
  const used = new Map<string, string[]>();
  for (const rule of file.groups.flatMap((group) => group.rules)) {
    const queries = Object.values(rule.annotations ?? {}).flatMap((text) =>
      [...text.matchAll(/query\s+"((?:[^"\\]|\\.)*)"/g)].map((match) => match[1]!),
    );
    used.set(rule.alert, [...new Set([rule.expr, ...queries].flatMap(metricNamesIn))]);
  }
  return used;
}

function metricsOfDashboard(dashboard: Dashboard): Map<string, string[]> {
  const used = new Map<string, string[]>();
  const visit = (panels: readonly Panel[]) => {
    for (const panel of panels) {
      const names = (panel.targets ?? []).flatMap((target) => metricNamesIn(target.expr));
      if (names.length > 0) used.set(panel.title, [...new Set(names)]);
      visit(panel.panels ?? []);
    }
  };
  visit(dashboard.panels);
  for (const variable of dashboard.templating.list) {
    const query = typeof variable.query === 'object' ? variable.query.query : variable.query;
    if (query && query !== 'prometheus') used.set(`variable ${query}`, metricNamesInTemplateQuery(query));
  }
  return used;
}

/** What `used` reads that `exported` does not hold, as `where: name` lines. */
function unknownMetrics(used: Map<string, string[]>, exported: Set<string>): string[] {
  return [...used].flatMap(([where, names]) =>
    names.filter((name) => !exported.has(name) && !PROMETHEUS_OWN.has(name)).map((name) => `${where}: ${name}`),
  );
}

const rules = parseYaml(readFileSync(ALERTS, 'utf8')) as RuleFile;
const dashboard = JSON.parse(readFileSync(DASHBOARD, 'utf8')) as Dashboard;

describe('metric names in PromQL', () => {
  it('are what is left once functions, labels, groupings, ranges, strings, numbers and variables are set aside', () => {
    expect(
      metricNamesIn(
        'histogram_quantile(0.95, sum by (le, operation) (rate(recon_x_bucket{job=~"$job", a!="b c"}[$__rate_interval])))',
      ),
    ).toEqual(['recon_x_bucket']);
    expect(metricNamesIn('max by (job) (delta(recon_a[1h])) > 0 and on(job) recon_b offset 5m == 1e3')).toEqual([
      'recon_a',
      'recon_b',
    ]);
    expect(metricNamesIn('1 - min(recon_c) / sum(rate(recon_d_total[5m])) without (instance)')).toEqual([
      'recon_c',
      'recon_d_total',
    ]);
    expect(metricNamesIn('up{job=~".*recon.*"} == 0')).toEqual(['up']);
    expect(metricNamesInTemplateQuery('label_values(recon_e_total{job="x"}, job)')).toEqual(['recon_e_total']);
  });

  it('are each family of a scrape, with the series of its histograms', () => {
    const names = exportedNames(
      '# HELP a_seconds x\n# TYPE a_seconds histogram\n# HELP b_total y\n# TYPE b_total counter\nb_total 0\n',
    );
    expect([...names].sort()).toEqual(['a_seconds', 'a_seconds_bucket', 'a_seconds_count', 'a_seconds_sum', 'b_total']);
  });
});

describe('deploy/prometheus/alerts.yml', () => {
  const all = rules.groups.flatMap((group) => group.rules);

  it('is a rule file: named groups of alerts, each with an expression, a severity, a summary and a description', () => {
    expect(rules.groups.length).toBeGreaterThan(0);
    for (const group of rules.groups) {
      expect(group.name).toMatch(/^\w+$/);
      expect(group.rules.length).toBeGreaterThan(0);
    }
    for (const rule of all) {
      expect(Object.keys(rule).sort(), rule.alert).toEqual(
        ['alert', 'annotations', 'expr', 'labels', ...(rule.for ? ['for'] : [])].sort(),
      );
      expect(rule.alert).toMatch(/^Recon[A-Z]\w+$/);
      expect(rule.expr.trim()).not.toBe('');
      expect(['critical', 'warning']).toContain(rule.labels.severity);
      expect(rule.annotations.summary?.trim(), rule.alert).toBeTruthy();
      expect(rule.annotations.description?.trim(), rule.alert).toBeTruthy();
      if (rule.for) expect(rule.for).toMatch(/^\d+[smhd]$/);
    }
    expect(new Set(all.map((rule) => rule.alert)).size).toBe(all.length);
  });

  it('alerts on what an operator must hear of: failed, suspect and late runs, the callback base, jobs, refusals', () => {
    const reads = metricsOfRules(rules);
    const watched = new Set([...reads.values()].flat());
    for (const metric of [
      'recon_nightly_latest_run_failed',
      'recon_nightly_latest_run_suspect',
      'recon_nightly_run_late',
      'recon_callback_base_reachable',
      'recon_jobs_failed',
      'recon_deliveries_refused_total',
    ])
      expect(watched).toContain(metric);
  });

  const promtool = process.env.PATH?.split(path.delimiter).some((dir) => {
    try {
      accessSync(path.join(dir, 'promtool'), constants.X_OK);
      return true;
    } catch {
      return false;
    }
  });
  it.skipIf(!promtool)('passes `promtool check rules` (where Prometheus is installed)', async () => {
    const { stdout } = await promisify(execFile)('promtool', ['check', 'rules', ALERTS]);
    expect(stdout).toContain(`SUCCESS: ${all.length} rules found`);
  });
});

describe('deploy/grafana/recon.json', () => {
  it('is a dashboard whose every panel but rows queries Prometheus', () => {
    expect(dashboard).toMatchObject({ uid: 'recon', title: 'recon' });
    const titles = new Set<string>();
    for (const panel of dashboard.panels) {
      expect(panel.title.trim()).not.toBe('');
      titles.add(panel.title);
      if (panel.type !== 'row') expect(panel.targets?.length, panel.title).toBeGreaterThan(0);
    }
    for (const title of ['Deliveries', 'Ingest seconds', 'Request latency', 'Reconcile seconds', 'Runs by state'])
      expect(titles).toContain(title);
    for (const title of ['Event loop lag', 'Heap']) expect(titles).toContain(title);
  });
});

/**
 * The metric names both files use, against those a real `recon serve` exports: its admin listener's /metrics, on an
 * embedded database, as an operator's Prometheus would scrape it.
 */
describe('the metric names the deploy files use', () => {
  let testDb: TestDatabase;
  let recon: RunningRecon;
  let scrape: string;
  let exported: Set<string>;

  beforeAll(async () => {
    testDb = await createTestDatabase('pglite');
    await testDb.close();
    const { baseUrl, port } = await refusingBaseUrl();
    recon = startRecon(['serve'], {
      ...testDb.env,
      RECON_SERVICE_URL: 'http://127.0.0.1:9',
      RECON_IDENTIFIER: 'DEPLOY',
      RECON_SECRET: 'deploy-secret',
      RECON_PORT: String(port),
      RECON_CALLBACK_BASE_URL: `${baseUrl}/`,
    });
    const { adminUrl } = await listeningUrls(recon);
    scrape = await (await fetch(`${adminUrl}/metrics`)).text();
    exported = exportedNames(scrape);
  }, 60_000);
  afterAll(async () => {
    if (recon) {
      recon.child.kill('SIGTERM');
      await recon.done;
    }
    await testDb?.drop();
  });

  it('are all exported by recon serve', () => {
    expect(exported.size).toBeGreaterThan(30);
    expect(unknownMetrics(metricsOfRules(rules), exported)).toEqual([]);
    expect(unknownMetrics(metricsOfDashboard(dashboard), exported)).toEqual([]);
  });

  it('are each documented in docs/operations.md, with the type recon serve gives them', () => {
    const documented = documentedMetrics(readFileSync(path.join(packageRoot(), 'docs', 'operations.md'), 'utf8'));
    const types = new Map(documented.recon.map((metric) => [metric.name, metric.type]));
    const undocumented: string[] = [];
    for (const [, name, type] of scrape.matchAll(/^# TYPE (\S+) (\S+)$/gm)) {
      if (!name!.startsWith('recon_')) continue;
      if (!types.has(name!)) undocumented.push(`${name}: not documented`);
      else if (types.get(name!) && types.get(name!) !== type)
        undocumented.push(`${name}: documented as a ${types.get(name!)}, exported as a ${type}`);
    }
    expect(undocumented).toEqual([]);
    expect(documented.node.filter((name) => !exported.has(name))).toEqual([]);
  });

  it('would be refused if a rule or a panel named a metric recon does not export', () => {
    const broken: RuleFile = {
      groups: [
        {
          name: 'recon',
          rules: [
            {
              alert: 'ReconTypo',
              expr: 'max by (job) (recon_nightly_run_failed) == 1',
              labels: { severity: 'critical' },
              annotations: { summary: 'x', description: 'y' },
            },
          ],
        },
      ],
    };
    expect(unknownMetrics(metricsOfRules(broken), exported)).toEqual(['ReconTypo: recon_nightly_run_failed']);
    const panel = { title: 'Typo', type: 'timeseries', targets: [{ expr: 'rate(recon_ingest_seconds_bucket[5m])' }] };
    expect(unknownMetrics(metricsOfDashboard({ ...dashboard, panels: [panel] }), exported)).toEqual([
      'Typo: recon_ingest_seconds_bucket',
    ]);
  });
});
