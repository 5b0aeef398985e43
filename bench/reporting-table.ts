/**
 * bench:reporting's figures and targets (docs/benchmarks.md): every statement and report timed, judged against its
 * target and beside the reference of the same run, printed slowest first, or as JSON.
 */

export const QUERY_TARGET_SECONDS = 1;
export const REPORT_TARGET_SECONDS = 10;

export interface Measured {
  kind: 'docs' | 'question' | 'report';
  name: string;
  /** What was run: the SQL, or recon's arguments. */
  command: string;
  /** Every timing, in seconds; the best is judged. */
  seconds: number[];
  targetSeconds: number;
  /** What came back: rows for a query, bytes for a report. */
  rows?: number;
  bytes?: number;
  /** A report's peak RSS: the highest of its runs. */
  peakRssMb?: number;
  /** True for a statement that writes, in a transaction rolled back. */
  rolledBack?: boolean;
}

export interface ReportingFigures {
  backend: 'PostgreSQL' | 'PGlite';
  serverVersion: string;
  /** The database's name on PostgreSQL, recon's data directory on PGlite. */
  database: string;
  /** Who the statements ran as: the accountants' roles, or PGlite's one user. */
  runAs: string;
  orders: number;
  runs: number;
  samples: { runId: number; orderId: string; status: string; currency: string; identifier: string };
  reference: { name: string; sql: string; seconds: number[] };
  measured: Measured[];
}

export const best = (seconds: readonly number[]) => Math.min(...seconds);

export function judged(m: Measured, referenceSeconds: number) {
  const bestSeconds = best(m.seconds);
  return {
    bestSeconds,
    ofTarget: bestSeconds / m.targetSeconds,
    ofReference: bestSeconds / referenceSeconds,
    met: bestSeconds <= m.targetSeconds,
  };
}

/** 0.42 ms, 12.3 ms, 456 ms, 1.23 s, 12.3 s: three figures at most, in the unit a reader thinks in. */
export function duration(seconds: number): string {
  const ms = seconds * 1000;
  if (ms < 10) return `${ms.toFixed(2)} ms`;
  if (ms < 100) return `${ms.toFixed(1)} ms`;
  if (ms < 1000) return `${ms.toFixed(0)} ms`;
  return seconds < 10 ? `${seconds.toFixed(2)} s` : `${seconds.toFixed(1)} s`;
}

const count = (n: number) => n.toLocaleString('en');
const ratio = (x: number) => (x < 0.01 ? '<0.01x' : x < 10 ? `${x.toFixed(2)}x` : `${x.toFixed(0)}x`);
const size = (bytes: number) => (bytes < 1e6 ? `${(bytes / 1e3).toFixed(1)} kB` : `${(bytes / 1e6).toFixed(1)} MB`);

function result(m: Measured): string {
  const parts: string[] = [];
  if (m.rows !== undefined) parts.push(`${count(m.rows)} row${m.rows === 1 ? '' : 's'}`);
  if (m.bytes !== undefined) parts.push(size(m.bytes));
  if (m.peakRssMb !== undefined) parts.push(`peak RSS ${m.peakRssMb.toFixed(0)} MB`);
  if (m.rolledBack) parts.push('rolled back');
  return parts.join(', ');
}

/** The table: one line per statement or report, slowest first, with its target, both ratios and ✓ or ✗. */
export function reportingTable(figures: ReportingFigures): string {
  const reference = best(figures.reference.seconds);
  const rows = figures.measured
    .map((m) => ({ m, j: judged(m, reference) }))
    .sort((a, b) => b.j.bestSeconds - a.j.bestSeconds || a.m.name.localeCompare(b.m.name));
  const lines: string[][] = [['best', 'target', 'of target', 'of ref', 'met', 'kind', 'what', 'result']];
  for (const { m, j } of rows)
    lines.push([
      duration(j.bestSeconds),
      `${m.targetSeconds} s`,
      ratio(j.ofTarget),
      ratio(j.ofReference),
      j.met ? '✓' : '✗',
      m.kind,
      m.name,
      result(m),
    ]);
  const widths = lines[0]!.map((_, i) => Math.max(...lines.map((l) => l[i]!.length)));
  const leftAligned = new Set([4, 5, 6, 7]);
  const line = (cells: string[]) =>
    cells
      .map((cell, i) => (leftAligned.has(i) ? cell.padEnd(widths[i]!) : cell.padStart(widths[i]!)))
      .join('  ')
      .trimEnd();
  const missed = rows.filter((r) => !r.j.met).length;
  const s = figures.samples;
  const on =
    figures.backend === 'PGlite'
      ? `PGlite (PostgreSQL ${figures.serverVersion}): data directory ${figures.database}`
      : `PostgreSQL ${figures.serverVersion}: database ${figures.database}`;
  return [
    `reporting benchmark on ${on}, ${count(figures.orders)} orders, ${figures.runs} runs (node ${process.version})`,
    `latest run ${s.runId}; sample order ${s.orderId}, status ${s.status}, currency ${s.currency}, ` +
      `account ${s.identifier}`,
    `reference: ${figures.reference.name}, ${figures.reference.sql}: ${duration(reference)} ` +
      `(best of ${figures.reference.seconds.length})`,
    `statements run as ${figures.runAs}`,
    `each measure: best of ${Math.min(...figures.measured.map((m) => m.seconds.length))}; ` +
      `targets ${QUERY_TARGET_SECONDS} s a query, ${REPORT_TARGET_SECONDS} s a report`,
    '',
    ...lines.map(line),
    `${rows.length - missed} of ${rows.length} within target${missed ? `; ${missed} missed (✗)` : ''}`,
  ].join('\n');
}

export function reportingJson(figures: ReportingFigures): Record<string, unknown> {
  const reference = best(figures.reference.seconds);
  return {
    ...figures,
    reference: { ...figures.reference, bestSeconds: reference },
    measured: figures.measured.map((m) => ({ ...m, ...judged(m, reference) })),
  };
}
