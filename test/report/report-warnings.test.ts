import { describe, expect, it } from 'vitest';
import { renderCsv } from '../../src/report/report-csv.ts';
import { renderHtml } from '../../src/report/report-html.ts';
import { renderJson } from '../../src/report/report-json.ts';
import { renderTable } from '../../src/report/report-table.ts';
import { collect, GENERATED_AT, morningReport, pages } from './morning-report-fixture.ts';

/** The warnings on a run's verdicts in every format: counted whole, the first listed, a matched order among them. */
describe("the run's warnings", () => {
  it('are listed in the table with their count and how many are left out', () => {
    const text = renderTable(morningReport(), [], { generatedAt: GENERATED_AT });
    expect(text).toContain(
      "Warnings on the run's verdicts: 3 on 2 verdicts, whatever their status (a warning changes none), by order id",
    );
    expect(text).toMatch(
      /W-1\s+matched\s+EUR\s+SHOP-INST\s+payment T-W1 on account SHOP-INST, which does not serve wallet\n/,
    );
    expect(text).toContain(
      '... and 1 more: `recon report --format csv` lists more, reporting.warnings every current one',
    );
  });

  it('are a section of the csv before the open exceptions', async () => {
    const rows = (await collect(renderCsv(morningReport(), pages([]), { generatedAt: GENERATED_AT }))).split('\r\n');
    const start = rows.findIndex((row) => row.startsWith('"warnings on the run'));
    expect(rows[start]).toBe(
      `"warnings on the run's verdicts, whatever their status (3 on 2 verdicts; the first 2 by order_id)"`,
    );
    expect(rows.slice(start + 1, rows.indexOf('', start))).toEqual([
      'order_id,status,currency,account,warning',
      'W-1,matched,EUR,SHOP-INST,"payment T-W1 on account SHOP-INST, which does not serve wallet"',
      'W-2,pending,EUR,,"abandoned at the redirect step (0002), no money moved: T-W2"',
    ]);
    expect(start).toBeLessThan(rows.findIndex((row) => row.startsWith('"open exceptions (')));
  });

  it('are counted and listed in the json', async () => {
    const json = JSON.parse(await collect(renderJson(morningReport(), pages([]), { generatedAt: GENERATED_AT })));
    expect(json.verdictWarnings).toMatchObject({ verdicts: 2, warnings: 3 });
    expect(json.verdictWarnings.listed[0]).toEqual({
      orderId: 'W-1',
      status: 'matched',
      currency: 'EUR',
      identifier: 'SHOP-INST',
      warning: 'payment T-W1 on account SHOP-INST, which does not serve wallet',
    });
  });

  it('have a section of the html page, after the exceptions, saying how many it leaves out', () => {
    const page = renderHtml(morningReport(), [], { generatedAt: GENERATED_AT, perGroup: 10 });
    const section = page.match(/<section id="warnings">[\s\S]*?<\/section>/)![0];
    expect(page.indexOf('<section id="warnings">')).toBeGreaterThan(page.indexOf('<section id="exceptions">'));
    expect(section).toContain('<h2>Warnings (3)</h2>');
    expect(section).toContain(
      '<td class="id"><bdi>W-1</bdi></td><td><span class="badge matched">matched</span></td><td>EUR</td><td class="id"><bdi>SHOP-INST</bdi></td>',
    );
    expect(section).toContain('Showing the first 2 by order id');
    const none = renderHtml(morningReport({ verdictWarnings: { verdicts: 0, warnings: 0, listed: [] } }), [], {
      generatedAt: GENERATED_AT,
      perGroup: 10,
    });
    expect(none).toContain('<p>None: no verdict of this run carries a warning.</p>');
  });
});
