/** Words of PromQL that are not metric names where they stand alone. */
const KEYWORDS = new Set(['and', 'or', 'unless', 'bool', 'offset', 'inf', 'nan', 'atan2', 'start', 'end']);

/**
 * The metric names a PromQL expression reads, as the rules and dashboards write them: what is left once strings,
 * label matchers, grouping clauses, ranges, Grafana's $variables and numbers are set aside, less function calls and
 * keywords. Not a parser: enough for the expressions recon ships, and strict (an unknown word counts as a metric).
 */
export function metricNamesIn(expr: string): string[] {
  const bare = expr
    .replace(/"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|`[^`]*`/g, ' ')
    .replace(/\{[^}]*\}/g, ' ')
    .replace(/\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, ' ')
    .replace(/\[[^\]]*\]/g, ' ')
    .replace(/\$\{?\w+\}?/g, ' ');
  const names = new Set<string>();
  for (const match of bare.matchAll(/(?<![\w.:])[a-zA-Z_:][\w:]*/g)) {
    // Followed by a parenthesis, it is a function.
    const rest = bare.slice(match.index + match[0].length);
    if (/^\s*\(/.test(rest) || KEYWORDS.has(match[0].toLowerCase())) continue;
    names.add(match[0]);
  }
  return [...names].sort();
}

/** The metric a Grafana template query reads: `label_values(metric, label)`, or a PromQL expression. */
export function metricNamesInTemplateQuery(query: string): string[] {
  const labelValues = /^\s*label_values\(\s*([a-zA-Z_:][\w:]*)\s*(?:\{[^}]*\})?\s*,\s*\w+\s*\)\s*$/.exec(query);
  if (labelValues) return [labelValues[1]!];
  const queryResult = /^\s*query_result\((.*)\)\s*$/.exec(query);
  return metricNamesIn(queryResult ? queryResult[1]! : query);
}

/**
 * The names a Prometheus text scrape offers to queries: each family of a `# TYPE` line, and for a histogram its
 * `_bucket`, `_sum` and `_count` series (a summary: `_sum`, `_count`), whether or not they have samples yet.
 */
export function exportedNames(scrape: string): Set<string> {
  const names = new Set<string>();
  for (const [, name, type] of scrape.matchAll(/^# TYPE (\S+) (\S+)$/gm)) {
    names.add(name!);
    if (type === 'histogram') for (const suffix of ['_bucket', '_sum', '_count']) names.add(name! + suffix);
    if (type === 'summary') for (const suffix of ['_sum', '_count']) names.add(name! + suffix);
  }
  return names;
}
