import { expect, it } from 'vitest';
import { renderMoneyChart } from '../../src/report/money-chart.ts';
import type { SettlementDay } from '../../src/report/run-report.ts';
import { chartSpan } from '../../src/report/verdict-chart.ts';

const day = (date: string, currency: string, paid: string, refunded: string, fees: string): SettlementDay => ({
  day: date,
  currency,
  transactions: 1,
  payments: 1,
  refunds: 0,
  paidMinor: paid,
  refundedMinor: refunded,
  feesMinor: fees,
  netMinor: (BigInt(paid) - BigInt(refunded) - BigInt(fees)).toString(),
});

it("draws one currency's money per bucket on its own scale, net below zero when refunds and fees exceed gross", () => {
  const { unit, starts } = chartSpan('2026-11-10', '2026-11-12');
  const days = [
    day('2026-11-10', 'KWD', '12345', '0', '45'),
    day('2026-11-12', 'KWD', '1000', '2000', '0'),
    day('2026-11-11', 'EUR', '999999', '0', '0'),
  ];
  const svg = renderMoneyChart('KWD', unit, starts, days).text;
  // The EUR day is not KWD's: the scale is KWD's largest day, written at the top in its units.
  expect(svg).toContain('>12.345 KWD</text>');
  expect(svg).toContain('<title>2026-11-10: gross 12.345, refunds 0.000, fees 0.045, net 12.300 KWD</title>');
  expect(svg).toContain('<title>2026-11-11: gross 0.000, refunds 0.000, fees 0.000, net 0.000 KWD</title>');
  expect(svg).toContain('<title>2026-11-12: gross 1.000, refunds 2.000, fees 0.000, net -1.000 KWD</title>');
  expect(svg.match(/<rect class="gross"/g)).toHaveLength(2);
  expect(svg.match(/<rect class="net negative"/g)).toHaveLength(1);
});

it('labels a currency whose days are refunds alone by its lowest net, not as a currency without money', () => {
  // A JPY/KWD run: KWD refunded 12.345 and paid 0.120 of fees, gross nothing.
  const { unit, starts } = chartSpan('2026-11-18', '2026-11-19');
  const svg = renderMoneyChart('KWD', unit, starts, [day('2026-11-19', 'KWD', '0', '12345', '120')]).text;
  expect(svg).not.toContain('no money');
  expect(svg).toContain('>0.000 KWD</text>');
  expect(svg).toContain('>lowest net -12.465 KWD</text>');
  expect(svg.match(/<rect class="net negative"/g)).toHaveLength(1);
  expect(svg).not.toContain('<rect class="gross"');
  // The bar runs from the zero line at the top of the plot down its whole height.
  expect(svg).toMatch(/<rect class="net negative" x="[\d.]+" y="18" width="[\d.]+" height="86"\/>/);
});

it('marks a day whose money nets to nothing on the zero line, and says so of a currency where nothing moved', () => {
  const { unit, starts } = chartSpan('2026-11-18', '2026-11-19');
  const svg = renderMoneyChart('EUR', unit, starts, [day('2026-11-19', 'EUR', '1000', '900', '100')]).text;
  expect(svg).toContain('<title>2026-11-19: gross 10.00, refunds 9.00, fees 1.00, net 0.00 EUR</title>');
  expect(svg.match(/<rect class="net zero"/g)).toHaveLength(1);
  expect(svg).not.toContain('lowest net');
  const none = renderMoneyChart('JPY', unit, starts, []).text;
  expect(none).toContain('>no money moved in JPY</text>');
  expect(none).not.toContain('<rect');
});
