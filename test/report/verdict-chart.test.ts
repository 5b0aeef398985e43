import { describe, expect, it } from 'vitest';
import type { DayVerdicts } from '../../src/report/run-report.ts';
import { chartBuckets, renderVerdictChart } from '../../src/report/verdict-chart.ts';

const day = (date: string, matched: number, exceptions = 0): DayVerdicts => ({
  day: date,
  matched,
  pending: 0,
  exceptions,
  byStatus: new Map([['matched', matched], ...(exceptions > 0 ? [['amount_mismatch', exceptions] as const] : [])]),
});

describe('chart buckets', () => {
  it('draws up to 92 days as days, the days without orders as empty bars', () => {
    const { unit, buckets } = chartBuckets([day('2026-02-27', 1), day('2026-03-02', 2, 1)]);
    expect(unit).toBe('day');
    expect(buckets.map((bucket) => [bucket.start, bucket.matched, bucket.exceptions])).toEqual([
      ['2026-02-27', 1, 0],
      ['2026-02-28', 0, 0],
      ['2026-03-01', 0, 0],
      ['2026-03-02', 2, 1],
    ]);
  });

  it('groups a longer span by ISO week (from Monday), a span of years by month', () => {
    const weeks = chartBuckets([
      day('2026-01-01', 1),
      day('2026-01-04', 2),
      day('2026-01-05', 4),
      day('2026-06-30', 8, 1),
    ]);
    expect(weeks.unit).toBe('week');
    expect(weeks.buckets[0]).toMatchObject({ start: '2025-12-29', matched: 3 });
    expect(weeks.buckets[1]).toMatchObject({ start: '2026-01-05', matched: 4 });
    expect(weeks.buckets.at(-1)).toMatchObject({ start: '2026-06-29', matched: 8, exceptions: 1 });
    expect(weeks.buckets.at(-1)!.byStatus.get('amount_mismatch')).toBe(1);

    const months = chartBuckets([day('2022-12-31', 1), day('2026-02-01', 2)]);
    expect(months.unit).toBe('month');
    expect(months.buckets).toHaveLength(39);
    expect(months.buckets[0]).toMatchObject({ start: '2022-12-01', matched: 1 });
    expect(months.buckets.at(-1)).toMatchObject({ start: '2026-02-01', matched: 2 });
  });

  it('has no bucket without days', () => {
    expect(chartBuckets([])).toEqual({ unit: 'day', buckets: [] });
  });

  it("stretches to the run's days, so that the money per day lines up under the verdicts", () => {
    const { unit, buckets } = chartBuckets([day('2026-11-10', 1)], { from: '2026-11-10', to: '2026-11-13' });
    expect(unit).toBe('day');
    expect(buckets.map((bucket) => bucket.start)).toEqual(['2026-11-10', '2026-11-11', '2026-11-12', '2026-11-13']);
    expect(chartBuckets([], { from: '2026-11-10', to: '2026-11-10' }).buckets).toHaveLength(1);
  });
});

describe('chart svg', () => {
  it('stacks a bar per series with counts, at least a pixel high, and a title per bucket', () => {
    const { unit, buckets } = chartBuckets([day('2026-03-01', 10000, 1), day('2026-03-03', 5)]);
    const svg = renderVerdictChart(unit, buckets).text;
    const bars = [
      ...svg.matchAll(/<rect class="bar (\w+)" x="[\d.]+" y="[\d.]+" width="([\d.]+)" height="([\d.]+)"\/>/g),
    ];
    expect(bars.map((bar) => bar[1])).toEqual(['matched', 'exceptions', 'matched']);
    for (const bar of bars) {
      expect(Number(bar[2])).toBeGreaterThan(0);
      expect(Number(bar[3])).toBeGreaterThanOrEqual(1);
    }
    expect(svg).toContain('<title>2026-03-01: 10001 verdicts (matched 10000, amount_mismatch 1)</title>');
    expect(svg).toContain('<title>2026-03-02: 0 verdicts</title>');
  });
});
