import type { VerdictStatus } from '../db/schema.ts';
import { html, type Html } from './html-template.ts';
import type { DayVerdicts } from './run-report.ts';

/**
 * The chart of verdicts per day of order creation: stacked bars (matched, pending, exceptions), drawn here
 * as inline SVG so the page needs no script. A long span is drawn per week or per month so that bars stay
 * wide enough to see; days without orders are drawn as gaps, not skipped, so the time axis is true.
 */
export type ChartUnit = 'day' | 'week' | 'month';

export interface ChartBucket {
  /** First day of the bucket, `YYYY-MM-DD` (a Monday for weeks, the 1st for months). */
  readonly start: string;
  readonly matched: number;
  readonly pending: number;
  readonly exceptions: number;
  readonly byStatus: ReadonlyMap<VerdictStatus, number>;
}

const MAX_DAY_BARS = 92;
const MAX_WEEK_BARS = 157;
const DAY_MS = 86_400_000;

/** The days of a chart, first to last (`YYYY-MM-DD`), in the unit that keeps bars wide enough, and its buckets' starts. */
export interface ChartSpan {
  readonly unit: ChartUnit;
  readonly starts: readonly string[];
}

export function chartSpan(from: string, to: string): ChartSpan {
  const first = parseDay(from);
  const last = parseDay(to);
  const span = Math.round((last - first) / DAY_MS) + 1;
  const unit: ChartUnit = span <= MAX_DAY_BARS ? 'day' : span <= MAX_WEEK_BARS * 7 ? 'week' : 'month';
  const starts: string[] = [];
  for (let start = bucketStart(first, unit); start <= last; start = nextBucket(start, unit))
    starts.push(formatDay(start));
  return { unit, starts };
}

/** The start of the bucket of `day` (`YYYY-MM-DD`). */
export function bucketOf(day: string, unit: ChartUnit): string {
  return formatDay(bucketStart(parseDay(day), unit));
}

/**
 * The verdicts per bucket over their own days or, given `range`, over the range stretched to hold them: the money
 * per day is drawn under this chart on the same buckets.
 */
export function chartBuckets(
  days: readonly DayVerdicts[],
  range?: { readonly from: string; readonly to: string } | null,
): { unit: ChartUnit; buckets: ChartBucket[] } {
  if (days.length === 0 && !range) return { unit: 'day', buckets: [] };
  const from = [days[0]?.day, range?.from].filter((day) => day !== undefined).sort()[0]!;
  const to = [days.at(-1)?.day, range?.to]
    .filter((day) => day !== undefined)
    .sort()
    .at(-1)!;
  const { unit, starts } = chartSpan(from, to);

  const buckets = new Map<
    string,
    { matched: number; pending: number; exceptions: number; byStatus: Map<VerdictStatus, number> }
  >();
  for (const start of starts) buckets.set(start, { matched: 0, pending: 0, exceptions: 0, byStatus: new Map() });
  for (const day of days) {
    const bucket = buckets.get(bucketOf(day.day, unit))!;
    bucket.matched += day.matched;
    bucket.pending += day.pending;
    bucket.exceptions += day.exceptions;
    for (const [status, count] of day.byStatus) bucket.byStatus.set(status, (bucket.byStatus.get(status) ?? 0) + count);
  }
  return { unit, buckets: [...buckets].map(([start, counts]) => ({ start, ...counts })) };
}

function parseDay(day: string): number {
  return Date.UTC(Number(day.slice(0, 4)), Number(day.slice(5, 7)) - 1, Number(day.slice(8, 10)));
}

function formatDay(time: number): string {
  return new Date(time).toISOString().slice(0, 10);
}

function bucketStart(time: number, unit: ChartUnit): number {
  const date = new Date(time);
  if (unit === 'day') return time;
  if (unit === 'week') return time - ((date.getUTCDay() + 6) % 7) * DAY_MS;
  return Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), 1);
}

function nextBucket(time: number, unit: ChartUnit): number {
  if (unit === 'day') return time + DAY_MS;
  if (unit === 'week') return time + 7 * DAY_MS;
  const date = new Date(time);
  return Date.UTC(date.getUTCFullYear(), date.getUTCMonth() + 1, 1);
}

/** The plot's frame, shared with the money chart drawn under it so that their buckets line up. */
export const WIDTH = 960;
const HEIGHT = 300;
export const PLOT = { left: 56, right: 16, top: 16, bottom: 40 };
const MAX_LABELS = 10;
const SERIES = ['matched', 'pending', 'exceptions'] as const;

export function renderVerdictChart(unit: ChartUnit, buckets: readonly ChartBucket[]): Html {
  const plotHeight = HEIGHT - PLOT.top - PLOT.bottom;
  const baseline = PLOT.top + plotHeight;
  const highest = Math.max(1, ...buckets.map((bucket) => bucket.matched + bucket.pending + bucket.exceptions));
  const step = niceStep(highest / 5);
  const top = Math.ceil(highest / step) * step;
  const y = (count: number) => (count / top) * plotHeight;
  const { barWidth, barX } = barSlots(buckets.length);
  const labelEvery = Math.ceil(buckets.length / MAX_LABELS);

  const grid = [];
  for (let value = 0; value <= top; value += step) {
    const lineY = round(baseline - y(value));
    grid.push(
      html`<line class="grid" x1="${PLOT.left}" x2="${WIDTH - PLOT.right}" y1="${lineY}" y2="${lineY}"/><text class="axis" x="${PLOT.left - 8}" y="${lineY + 4}" text-anchor="end">${value.toLocaleString('en-US')}</text>`,
    );
  }

  const bars = buckets.map((bucket, i) => {
    const x = barX(i);
    let stacked = 0;
    const segments = SERIES.map((series) => {
      const count = bucket[series];
      if (count === 0) return null;
      // At least one pixel: a single exception among thousands of matches must still show.
      const height = Math.max(1, y(count));
      stacked += height;
      return html`<rect class="bar ${series}" x="${x}" y="${round(baseline - stacked)}" width="${round(barWidth)}" height="${round(height)}"/>`;
    });
    const label = i % labelEvery === 0 ? bucketAxisLabel(unit, bucket.start, x + barWidth / 2, baseline + 18) : null;
    return html`<g><title>${bucketTitle(unit, bucket)}</title>${segments}</g>${label}`;
  });

  return html`<svg class="chart" viewBox="0 0 ${WIDTH} ${HEIGHT}" role="img" aria-label="Verdicts per ${unit} of order creation" preserveAspectRatio="xMidYMid meet">${grid}<line class="baseline" x1="${PLOT.left}" x2="${WIDTH - PLOT.right}" y1="${baseline}" y2="${baseline}"/>${bars}</svg>`;
}

/** The bars of a chart of `count` buckets across the plot: each bar's width and left edge. */
export function barSlots(count: number): { readonly barWidth: number; barX(index: number): number } {
  const slot = (WIDTH - PLOT.left - PLOT.right) / Math.max(1, count);
  const barWidth = Math.min(48, Math.max(1, slot * 0.72));
  return { barWidth, barX: (index) => round(PLOT.left + index * slot + (slot - barWidth) / 2) };
}

/** A bucket in words, for a bar's title: the day, the week of its first day, or the month. */
export function bucketName(unit: ChartUnit, start: string): string {
  return unit === 'day' ? start : unit === 'week' ? `week of ${start}` : start.slice(0, 7);
}

/** The bucket's label under the axis, centred at x. */
export function bucketAxisLabel(unit: ChartUnit, start: string, x: number, y: number): Html {
  return html`<text class="axis" x="${round(x)}" y="${y}" text-anchor="middle">${unit === 'month' ? start.slice(0, 7) : start}</text>`;
}

function bucketTitle(unit: ChartUnit, bucket: ChartBucket): string {
  const name = bucketName(unit, bucket.start);
  const total = bucket.matched + bucket.pending + bucket.exceptions;
  const detail = [...bucket.byStatus]
    .sort(([, a], [, b]) => b - a)
    .map(([status, count]) => `${status} ${count}`)
    .join(', ');
  return `${name}: ${total} verdict${total === 1 ? '' : 's'}${detail ? ` (${detail})` : ''}`;
}

/** 1, 2 or 5 times a power of ten: gridlines at round numbers. */
export function niceStep(rough: number): number {
  const power = 10 ** Math.floor(Math.log10(Math.max(rough, 1)));
  const scaled = rough / power;
  return (scaled <= 1 ? 1 : scaled <= 2 ? 2 : scaled <= 5 ? 5 : 10) * power;
}

export function round(value: number): number {
  return Math.round(value * 10) / 10;
}
