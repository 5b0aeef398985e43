/** A metric docs/operations.md documents: its name, and its type where its table has a type column. */
export interface DocumentedMetric {
  readonly name: string;
  readonly type: string | undefined;
}

const TYPES = new Set(['counter', 'gauge', 'histogram', 'summary']);

/**
 * The metrics of the `## Metrics` section of docs/operations.md: recon's own are the first cell of its tables'
 * rows (`recon_x{labels}`), Node's own are named in its text (`nodejs_...`, `process_...`).
 */
export function documentedMetrics(page: string): { recon: DocumentedMetric[]; node: string[] } {
  const start = page.indexOf('\n## Metrics\n');
  if (start < 0) throw new Error('docs/operations.md has no section ## Metrics');
  const end = page.indexOf('\n## ', start + 1);
  const section = page.slice(start, end < 0 ? undefined : end);
  const recon = [...section.matchAll(/^\| `([a-z_:][a-z0-9_:]*)(?:\{[^`]*\})?` \| ([^|]*) \|/gm)].map((match) => ({
    name: match[1]!,
    type: TYPES.has(match[2]!.trim()) ? match[2]!.trim() : undefined,
  }));
  const node = [...section.matchAll(/`((?:nodejs|process)_[a-z0-9_]+)(?:\{[^`]*\})?`/g)].map((match) => match[1]!);
  return { recon, node: [...new Set(node)] };
}
