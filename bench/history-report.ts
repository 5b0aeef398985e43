/**
 * bench:history's figures and its targets (docs/benchmarks.md): what one backend's ten runs measured, judged and
 * printed as one table, or as JSON.
 */

export interface RunFigures {
  /** 1-10, then 11 for the unchanged re-run. */
  run: number;
  asOf: string;
  seconds: number;
  /** Bytes the tables of schema recon grew by across the reconcile command alone. */
  addedBytes: number;
  /** Where those bytes went: the tables that grew most. */
  grown: Array<{ name: string; bytes: number }>;
  ordersInScope: number;
  lifecycle: { new: number; persisting: number; resolved: number };
}

export interface QueryFigures {
  name: string;
  sql: string;
  afterRun1Ms: number;
  afterRun10Ms: number;
}

export interface HistoryFigures {
  backend: 'PostgreSQL' | 'PGlite';
  serverVersion: string;
  orders: number;
  transactions: number;
  /** The ten runs, in order. */
  runs: RunFigures[];
  unchangedRerun: RunFigures;
  queries: QueryFigures[];
  /** The name of the one-order query among `queries`. */
  oneOrderQuery: string;
  /** The bare SQL join, median seconds: on the data of run 1, and on the data of the unchanged re-run. */
  referenceBeforeRun1: number;
  referenceAtRerun: number;
}

export interface Target {
  what: string;
  value: number;
  unit: 'x' | 'ms';
  limit: number;
  /** `<=` or `<`. */
  comparison: '<=' | '<';
  pass: boolean;
}

const STORAGE_RATIO = 1.5;
const QUERY_RATIO = 1.2;
const ONE_ORDER_MS = 10;
const FIRST_RUN_RATIO = 3;
const RERUN_RATIO = 1.0;

const target = (
  what: string,
  value: number,
  unit: Target['unit'],
  comparison: Target['comparison'],
  limit: number,
) => ({
  what,
  value,
  unit,
  limit,
  comparison,
  pass: comparison === '<=' ? value <= limit : value < limit,
});

export function storageOf(figures: HistoryFigures) {
  const first = figures.runs[0]!.addedBytes;
  const later = figures.runs.slice(1).reduce((sum, run) => sum + run.addedBytes, 0);
  return { first, later, ratio: (first + later) / first };
}

export function judge(figures: HistoryFigures): Target[] {
  const targets: Target[] = [
    target('storage, all 10 runs / run 1', storageOf(figures).ratio, 'x', '<=', STORAGE_RATIO),
  ];
  for (const query of figures.queries)
    targets.push(
      target(`${query.name}, run 10 / run 1`, query.afterRun10Ms / query.afterRun1Ms, 'x', '<=', QUERY_RATIO),
    );
  const oneOrder = figures.queries.find((q) => q.name === figures.oneOrderQuery)!;
  targets.push(target(`${figures.oneOrderQuery} after run 10`, oneOrder.afterRun10Ms, 'ms', '<', ONE_ORDER_MS));
  targets.push(
    target('run 1 / reference', figures.runs[0]!.seconds / figures.referenceBeforeRun1, 'x', '<=', FIRST_RUN_RATIO),
  );
  targets.push(
    target(
      'unchanged re-run / reference',
      figures.unchangedRerun.seconds / figures.referenceAtRerun,
      'x',
      '<=',
      RERUN_RATIO,
    ),
  );
  return targets;
}

const count = (n: number) => n.toLocaleString('en');
export const megabytes = (bytes: number) => `${(bytes / 1e6).toFixed(1)} MB`;
const ms = (value: number) => (value < 10 ? `${value.toFixed(2)} ms` : `${value.toFixed(0)} ms`);
const verdictOf = (pass: boolean) => (pass ? 'PASS' : 'FAIL');
const shown = (t: Target) => (t.unit === 'x' ? `${t.value.toFixed(2)}x` : ms(t.value));
const limitOf = (t: Target) => `${t.comparison}${t.limit}${t.unit === 'x' ? 'x' : ' ms'}`;

/** The table of one backend: runs, then every target with its figures, PASS or FAIL. */
export function historyTable(figures: HistoryFigures): string {
  const targets = judge(figures);
  const byWhat = new Map(targets.map((t) => [t.what, t]));
  const storage = storageOf(figures);
  const rows: string[][] = [['measure', 'after run 1', 'after run 10', 'value', 'target', 'met']];
  const row = (what: string, first: string, last: string, t?: Target) =>
    rows.push([what, first, last, t ? shown(t) : '', t ? limitOf(t) : '', t ? verdictOf(t.pass) : '']);
  row('storage added by run 1', megabytes(storage.first), '');
  row('storage added by runs 2..10', '', megabytes(storage.later));
  row('storage, all 10 runs / run 1', '', '', byWhat.get('storage, all 10 runs / run 1'));
  for (const q of figures.queries)
    row(q.name, ms(q.afterRun1Ms), ms(q.afterRun10Ms), byWhat.get(`${q.name}, run 10 / run 1`));
  row(`${figures.oneOrderQuery} after run 10`, '', '', byWhat.get(`${figures.oneOrderQuery} after run 10`));
  const rerun = figures.unchangedRerun;
  row(
    'run 1 / reference',
    `${figures.runs[0]!.seconds.toFixed(2)} s`,
    `ref ${figures.referenceBeforeRun1.toFixed(2)} s`,
    byWhat.get('run 1 / reference'),
  );
  row(
    'unchanged re-run / reference',
    `${rerun.seconds.toFixed(2)} s`,
    `ref ${figures.referenceAtRerun.toFixed(2)} s`,
    byWhat.get('unchanged re-run / reference'),
  );
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  const line = (r: string[]) =>
    r
      .map((cell, i) => (i === 0 ? cell.padEnd(widths[i]!) : cell.padStart(widths[i]!)))
      .join('  ')
      .trimEnd();

  const runs = [
    'run  as of                     seconds  storage added  verdicts   new  persisting  resolved',
    ...[...figures.runs, rerun].map((r) =>
      [
        (r.run === rerun.run ? 're' : String(r.run)).padStart(3),
        r.asOf.padEnd(24),
        r.seconds.toFixed(2).padStart(8),
        megabytes(r.addedBytes).padStart(14),
        count(r.ordersInScope).padStart(9),
        count(r.lifecycle.new).padStart(5),
        count(r.lifecycle.persisting).padStart(11),
        count(r.lifecycle.resolved).padStart(9),
      ].join(' '),
    ),
  ];
  const failed = targets.filter((t) => !t.pass).length;
  return [
    `history benchmark on ${figures.backend} ${figures.serverVersion}: ${count(figures.orders)} orders, ` +
      `${count(figures.transactions)} transactions, 10 runs with 1% of the orders changed before each of runs 2..10, ` +
      `then one unchanged re-run (node ${process.version})`,
    ...runs,
    '',
    ...rows.map(line),
    `${targets.length - failed} of ${targets.length} targets met`,
  ].join('\n');
}

export function historyJson(figures: HistoryFigures): Record<string, unknown> {
  return { ...figures, storage: storageOf(figures), targets: judge(figures) };
}
