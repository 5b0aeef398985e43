/**
 * Prometheus text exposition format 0.0.4: `# HELP` and `# TYPE` lines, then one `name{labels} value` line per
 * series. Pure, so the escaping rules are tested on their own.
 */
export type Labels = Readonly<Record<string, string>>;

export interface Sample {
  readonly labels?: Labels;
  readonly value: number;
}

export interface MetricFamily {
  readonly name: string;
  readonly help: string;
  readonly type: 'counter' | 'gauge';
  readonly samples: readonly Sample[];
}

export const PROMETHEUS_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

const METRIC_NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
// Names starting with __ are reserved for Prometheus itself.
const LABEL_NAME = /^(?!__)[a-zA-Z_][a-zA-Z0-9_]*$/;

export function isMetricName(name: string): boolean {
  return METRIC_NAME.test(name);
}

export function isLabelName(name: string): boolean {
  return LABEL_NAME.test(name);
}

export function formatMetrics(families: readonly MetricFamily[]): string {
  const lines: string[] = [];
  for (const family of families) {
    lines.push(`# HELP ${family.name} ${family.help.replaceAll('\\', '\\\\').replaceAll('\n', '\\n')}`);
    lines.push(`# TYPE ${family.name} ${family.type}`);
    for (const sample of family.samples)
      lines.push(`${family.name}${formatLabels(sample.labels)} ${formatValue(sample.value)}`);
  }
  return lines.length === 0 ? '' : `${lines.join('\n')}\n`;
}

function formatLabels(labels: Labels | undefined): string {
  const entries = Object.entries(labels ?? {});
  if (entries.length === 0) return '';
  const pairs = entries.map(
    ([name, value]) => `${name}="${value.replaceAll('\\', '\\\\').replaceAll('"', '\\"').replaceAll('\n', '\\n')}"`,
  );
  return `{${pairs.join(',')}}`;
}

function formatValue(value: number): string {
  if (Number.isNaN(value)) return 'NaN';
  if (value === Infinity) return '+Inf';
  if (value === -Infinity) return '-Inf';
  return String(value);
}
