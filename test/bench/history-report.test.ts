import { describe, expect, it } from 'vitest';
import { historyTable, judge, storageOf, type HistoryFigures, type RunFigures } from '../../bench/history-report.ts';

const run = (n: number, seconds: number, addedBytes: number): RunFigures => ({
  run: n,
  asOf: `2026-11-${19 + n}T00:00:00.000Z`,
  seconds,
  addedBytes,
  grown: [],
  ordersInScope: 1000,
  lifecycle: { new: 0, persisting: 0, resolved: 0 },
});

/** Ten runs where run 1 adds 100 MB and each later run `laterMb`; queries as given. */
function figures(laterMb: number, overrides: Partial<HistoryFigures> = {}): HistoryFigures {
  return {
    backend: 'PostgreSQL',
    serverVersion: '15',
    orders: 1000,
    transactions: 2000,
    runs: Array.from({ length: 10 }, (_, i) => run(i + 1, 3, (i === 0 ? 100 : laterMb) * 1e6)),
    unchangedRerun: run(11, 1, 0),
    queries: [
      { name: 'count(*) reporting.exceptions', sql: 'select 1', afterRun1Ms: 100, afterRun10Ms: 110 },
      { name: "one order's verdict", sql: 'select 1', afterRun1Ms: 2, afterRun10Ms: 2 },
    ],
    oneOrderQuery: "one order's verdict",
    referenceBeforeRun1: 1.5,
    referenceAtRerun: 1.25,
    ...overrides,
  };
}

const verdicts = (f: HistoryFigures) => Object.fromEntries(judge(f).map((t) => [t.what, t.pass]));

describe('judge', () => {
  it('passes what grows with changes and not with runs', () => {
    const f = figures(5);
    expect(storageOf(f)).toEqual({ first: 100e6, later: 45e6, ratio: 1.45 });
    expect(verdicts(f)).toEqual({
      'storage, all 10 runs / run 1': true,
      'count(*) reporting.exceptions, run 10 / run 1': true,
      "one order's verdict, run 10 / run 1": true,
      "one order's verdict after run 10": true,
      'run 1 / reference': true,
      'unchanged re-run / reference': true,
    });
  });

  it('fails each target past its limit', () => {
    const f = figures(100, {
      queries: [
        { name: 'count(*) reporting.exceptions', sql: 'select 1', afterRun1Ms: 100, afterRun10Ms: 121 },
        { name: "one order's verdict", sql: 'select 1', afterRun1Ms: 2, afterRun10Ms: 10 },
      ],
      unchangedRerun: run(11, 1.3, 0),
    });
    f.runs[0]!.seconds = 4.6;
    expect(Object.values(verdicts(f))).toEqual([false, false, false, false, false, false]);
    expect(judge(f)[0]!.value).toBe(10);
  });

  it('prints every target with PASS or FAIL', () => {
    const table = historyTable(figures(100));
    expect(table).toMatch(/storage, all 10 runs \/ run 1 .* 10\.00x +<=1\.5x +FAIL/);
    expect(table).toMatch(/unchanged re-run \/ reference .* 0\.80x +<=1x +PASS/);
    expect(table).toContain('5 of 6 targets met');
  });
});
