import { html, type Html } from './html-template.ts';
import { formatAmount } from './money-format.ts';
import type { SettlementDay } from './run-report.ts';
import {
  barSlots,
  bucketAxisLabel,
  bucketName,
  bucketOf,
  PLOT,
  round,
  WIDTH,
  type ChartUnit,
} from './verdict-chart.ts';

/**
 * The money moved per day of one currency, drawn under the verdict chart on the same buckets and frame so that a
 * day's money stands under the day's verdicts: gross (payments and captures) as a pale bar, net (gross - refunds -
 * fees) as a dark bar inside it, below the zero line when refunds and fees exceed it, and a mark on the zero line
 * when money moved but nets to nothing. Each currency has its own scale, said on the chart: its largest day at the
 * top left, its lowest net at the top right when a net is negative; amounts of different currencies are never drawn
 * against each other. A currency reads "no money moved" only when nothing moved at all, not when its gross is nil.
 */
const HEIGHT = 130;
const TOP = 18;
const BOTTOM = 26;

interface MoneyBucket {
  readonly start: string;
  paid: bigint;
  refunded: bigint;
  fees: bigint;
  net: bigint;
}

export function renderMoneyChart(
  currency: string | null,
  unit: ChartUnit,
  starts: readonly string[],
  days: readonly SettlementDay[],
): Html {
  const buckets = new Map<string, MoneyBucket>(
    starts.map((start) => [start, { start, paid: 0n, refunded: 0n, fees: 0n, net: 0n }]),
  );
  for (const day of days) {
    if (day.currency !== currency) continue;
    const bucket = buckets.get(bucketOf(day.day, unit));
    if (!bucket) continue;
    bucket.paid += BigInt(day.paidMinor);
    bucket.refunded += BigInt(day.refundedMinor);
    bucket.fees += BigInt(day.feesMinor);
    bucket.net += BigInt(day.netMinor);
  }
  const all = [...buckets.values()];
  const abs = (value: bigint) => (value < 0n ? -value : value);
  const top = all.reduce((max, b) => (b.paid > max ? b.paid : b.net > max ? b.net : max), 0n);
  const bottom = all.reduce((max, b) => (b.net < 0n && abs(b.net) > max ? abs(b.net) : max), 0n);
  const scale = top + bottom > 0n ? top + bottom : 1n;
  const plotHeight = HEIGHT - TOP - BOTTOM;
  // Pixels, not money: a per-mille ratio taken in bigint, then drawn.
  const pixels = (value: bigint) => (Number((abs(value) * 1000n) / scale) / 1000) * plotHeight;
  const zeroY = TOP + pixels(top);
  const { barWidth, barX } = barSlots(all.length);
  const labelEvery = Math.ceil(all.length / 10);
  const money = (minor: bigint) => formatAmount(minor, currency);
  const code = currency ?? 'no currency';
  const moved = (bucket: MoneyBucket) => bucket.paid !== 0n || bucket.refunded !== 0n || bucket.fees !== 0n;
  const anything = all.some(moved);

  const bars = all.map((bucket, i) => {
    const x = barX(i);
    const inner = round(barWidth * 0.5);
    const paid =
      bucket.paid > 0n
        ? html`<rect class="gross" x="${x}" y="${round(zeroY - pixels(bucket.paid))}" width="${round(barWidth)}" height="${round(Math.max(1, pixels(bucket.paid)))}"/>`
        : null;
    const net =
      bucket.net !== 0n
        ? html`<rect class="net${bucket.net < 0n ? ' negative' : ''}" x="${round(x + (barWidth - inner) / 2)}" y="${round(bucket.net > 0n ? zeroY - pixels(bucket.net) : zeroY)}" width="${inner}" height="${round(Math.max(1, pixels(bucket.net)))}"/>`
        : moved(bucket)
          ? html`<rect class="net zero" x="${round(x + (barWidth - inner) / 2)}" y="${round(zeroY - 1)}" width="${inner}" height="2"/>`
          : null;
    const label = i % labelEvery === 0 ? bucketAxisLabel(unit, bucket.start, x + barWidth / 2, HEIGHT - 8) : null;
    return html`<g><title>${bucketName(unit, bucket.start)}: gross ${money(bucket.paid)}, refunds ${money(bucket.refunded)}, fees ${money(bucket.fees)}, net ${money(bucket.net)} ${code}</title>${paid}${net}</g>${label}`;
  });

  return html`<svg class="money-chart" viewBox="0 0 ${WIDTH} ${HEIGHT}" role="img" aria-label="Money moved per ${unit} in ${code}" preserveAspectRatio="xMidYMid meet">
<text class="currency" x="${PLOT.left - 8}" y="${TOP + 10}" text-anchor="end">${currency ?? '—'}</text>
<text class="axis" x="${PLOT.left}" y="${TOP - 6}">${anything ? `${money(top)} ${code}` : `no money moved in ${code}`}</text>
${bottom > 0n ? html`<text class="axis" x="${WIDTH - PLOT.right}" y="${TOP - 6}" text-anchor="end">lowest net ${money(-bottom)} ${code}</text>` : null}
<line class="grid" x1="${PLOT.left}" x2="${WIDTH - PLOT.right}" y1="${TOP}" y2="${TOP}"/>
<line class="baseline" x1="${PLOT.left}" x2="${WIDTH - PLOT.right}" y1="${round(zeroY)}" y2="${round(zeroY)}"/>${bars}</svg>`;
}
