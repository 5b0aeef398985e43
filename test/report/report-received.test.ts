import { describe, expect, it } from 'vitest';
import { renderCsv } from '../../src/report/report-csv.ts';
import { renderHtml } from '../../src/report/report-html.ts';
import { renderJson } from '../../src/report/report-json.ts';
import { renderTable } from '../../src/report/report-table.ts';
import { collect, GENERATED_AT, morningReport, pages } from './morning-report-fixture.ts';

/** From the money received to the bridge's settled, in every format: each currency's lines, in order, with fees. */
describe("the money received down to the bridge's settled", () => {
  it('is a table of lines per currency, their signs said', () => {
    const text = renderTable(morningReport(), [], { generatedAt: GENERATED_AT });
    expect(text).toContain("From the money received to the bridge's settled");
    expect(text).toMatch(/EUR\s+received: payments and captures − refunds\s+3\s+4\s+1,020\.43\s+7\.50\n/);
    expect(text).toMatch(
      /EUR\s+− paid for orders in another currency \(currency_mismatch: in no bridge\)\s+1\s+1\s+-520\.43\s*\n/,
    );
    expect(text).toMatch(/EUR\s+= settled, the bridge\s+69\s+500\.00\s*\n/);
    expect(text).toMatch(/USD\s+= settled, the bridge\s+1\s+0\.00\s*\n/);
  });

  it('is a csv section of codes and plain amounts', async () => {
    const rows = (await collect(renderCsv(morningReport(), pages([]), { generatedAt: GENERATED_AT }))).split('\r\n');
    const start = rows.findIndex((row) => row.startsWith('"from the money received'));
    expect(rows.slice(start + 1, rows.indexOf('', start))).toEqual([
      'currency,step,line,orders,transactions,amount,fees',
      'EUR,1,received,3,4,1020.43,7.50',
      'EUR,2,paid_for_another_currency,1,1,-520.43,',
      'EUR,7,settled,69,,500.00,',
      'KWD,1,received,1,1,-12.465,0.000',
      'KWD,7,settled,1,,-12.465,',
      'USD,7,settled,1,,0.00,',
    ]);
  });

  it('is a list per currency in the json, amounts as strings of minor units', async () => {
    const json = JSON.parse(await collect(renderJson(morningReport(), pages([]), { generatedAt: GENERATED_AT })));
    expect(json.receivedToBridge[0]).toEqual({
      currency: 'EUR',
      exponent: 2,
      lines: [
        { line: 'received', orders: 3, transactions: 4, amountMinor: '102043', feesMinor: '750' },
        { line: 'paid_for_another_currency', orders: 1, transactions: 1, amountMinor: '-52043', feesMinor: null },
        { line: 'settled', orders: 69, transactions: null, amountMinor: '50000', feesMinor: null },
      ],
    });
    expect(json.receivedToBridge.map((currency: { currency: string }) => currency.currency)).toEqual([
      'EUR',
      'KWD',
      'USD',
    ]);
  });

  it('is a section of the html page under the bridge, each currency a block ending at its settled', () => {
    const page = renderHtml(morningReport(), [], { generatedAt: GENERATED_AT, perGroup: 10 });
    const section = page.match(/<section id="received">[\s\S]*?<\/section>/)![0];
    expect(page.indexOf('<section id="received">')).toBeGreaterThan(page.indexOf('<section id="bridge">'));
    expect(section.match(/<tbody class="received-currency">/g)).toHaveLength(3);
    expect(section).toMatch(
      /<tr class="received"><td><strong>EUR<\/strong> received: payments and captures − refunds<\/td>/,
    );
    expect(section).toContain('<td class="num neg">-520.43</td>');
    expect(section).toMatch(
      /<tr class="total"><td>= settled, the bridge<\/td><td class="num">69<\/td><td class="num"><\/td><td class="num "><strong>500\.00<\/strong><\/td>/,
    );
  });
});
