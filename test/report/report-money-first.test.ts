import { describe, expect, it } from 'vitest';
import { renderCsv } from '../../src/report/report-csv.ts';
import { renderHtml } from '../../src/report/report-html.ts';
import { renderJson } from '../../src/report/report-json.ts';
import { renderTable } from '../../src/report/report-table.ts';
import { collect, GENERATED_AT, morningReport, pages, settlementDay } from './morning-report-fixture.ts';

/**
 * Money first, in every format: before any count of verdicts, the last day's and the run's gross, refunds, fees and
 * net per currency, the money at risk handled and not, and how many exceptions nobody has handled.
 */
describe('the money first', () => {
  it('opens the table, right under the run and its warnings', () => {
    const text = renderTable(morningReport(), [], { generatedAt: GENERATED_AT });
    const lines = text.split('\n');
    expect(lines[0]).toMatch(/^Reconciliation run 12: nightly run of 2026-11-20/);
    expect(lines[2]).toBe(
      "Money of the last day, 2026-11-19, and of the run's days, 2026-11-10 to 2026-11-19 (Europe/Paris; net = gross - refunds - fees)",
    );
    const top = text.slice(0, text.indexOf('tolerance'));
    expect(top).toMatch(/EUR\s+last day\s+200\.00\s+50\.00\s+3\.00\s+147\.00\n/);
    expect(top).toMatch(/EUR\s+the run's days\s+500\.00\s+50\.00\s+7\.50\s+442\.50\n/);
    expect(top).toMatch(/KWD\s+last day\s+0\.000\s+12\.345\s+0\.120\s+-12\.465\n/);
    expect(top).toContain('Open exceptions not handled: 62; handled (acknowledged): 3');
    expect(top).toMatch(/EUR\s+4,600\.00 \(\+2 unknown\)\s+225\.00\n/);
    expect(top).toMatch(/KWD\s+12\.465\s+0\.000\n/);
    // The verdicts and the bridge come after.
    expect(text.indexOf('verdicts:')).toBeGreaterThan(text.indexOf('Open exceptions not handled'));
    expect(text.indexOf('Bridge per currency')).toBeGreaterThan(text.indexOf('Open exceptions not handled'));
  });

  it('is the first section of the csv', async () => {
    const csv = await collect(renderCsv(morningReport(), pages([]), { generatedAt: GENERATED_AT }));
    const rows = csv.split('\r\n');
    expect(rows.slice(0, 11)).toEqual([
      '\uFEFFrecon reconciliation report,run 12',
      '',
      `"money first: the last day and the run's days (2026-11-10 to 2026-11-19, Europe/Paris; net = gross - refunds - fees)"`,
      'currency,days,from,to,transactions,gross,refunds,fees,net',
      'EUR,last_day,2026-11-19,2026-11-19,2,200.00,50.00,3.00,147.00',
      'EUR,run,2026-11-10,2026-11-19,3,500.00,50.00,7.50,442.50',
      'KWD,last_day,2026-11-19,2026-11-19,1,0.000,12.345,0.120,-12.465',
      'KWD,run,2026-11-10,2026-11-19,1,0.000,12.345,0.120,-12.465',
      '',
      '"money at risk in the open exceptions, not handled and handled (acknowledged)"',
      'currency,not_handled,at_risk_not_handled,at_risk_not_handled_unknown,handled,at_risk_handled,at_risk_handled_unknown',
    ]);
    expect(rows.slice(11, 14)).toEqual([
      'EUR,61,4600.00,2,3,225.00,0',
      'KWD,1,12.465,0,0,0.000,0',
      'all currencies,62,,,3,,',
    ]);
  });

  it('comes first in the json, amounts as strings of minor units', async () => {
    const text = await collect(renderJson(morningReport(), pages([]), { generatedAt: GENERATED_AT }));
    const json = JSON.parse(text);
    expect(Object.keys(json).indexOf('moneyFirst')).toBeLessThan(Object.keys(json).indexOf('run'));
    expect(json.moneyFirst).toMatchObject({
      window: { from: '2026-11-10', to: '2026-11-19' },
      lastDay: '2026-11-19',
      exceptionsNotHandled: 62,
      exceptionsHandled: 3,
    });
    expect(json.moneyFirst.perCurrency[0]).toEqual({
      currency: 'EUR',
      exponent: 2,
      lastDay: {
        transactions: 2,
        payments: 1,
        refunds: 1,
        paidMinor: '20000',
        refundedMinor: '5000',
        feesMinor: '300',
        netMinor: '14700',
      },
      run: {
        transactions: 3,
        payments: 2,
        refunds: 1,
        paidMinor: '50000',
        refundedMinor: '5000',
        feesMinor: '750',
        netMinor: '44250',
      },
      atRisk: {
        notHandledMinor: '460000',
        notHandledUnknown: 2,
        notHandledExceptions: 61,
        handledMinor: '22500',
        handledUnknown: 0,
        handledExceptions: 3,
      },
    });
    expect(json.moneyFirst.perCurrency[1]).toMatchObject({
      currency: 'KWD',
      exponent: 3,
      lastDay: { netMinor: '-12465' },
    });
  });

  it('is the first section of the html page, before the cards of verdicts', () => {
    const page = renderHtml(morningReport(), [], { generatedAt: GENERATED_AT, perGroup: 10 });
    const main = page.slice(page.indexOf('<main>'));
    expect(main.indexOf('<section id="money-first">')).toBeLessThan(main.indexOf('<div class="cards">'));
    expect(main.indexOf('<section id="money-first">')).toBeLessThan(main.indexOf('<section'.concat(' id="bridge"')));
    expect(main.slice(0, main.indexOf('<section')).match(/<section/g)).toBeNull();
    const top = page.match(/<section id="money-first">[\s\S]*?<\/section>/)![0];
    expect(top).toContain('<span class="figure bad">62</span> open exceptions not handled yet');
    expect(top).toMatch(
      /<strong>EUR<\/strong><\/td><td>Last day <span class="muted">2026-11-19<\/span><\/td><td class="num">200\.00<\/td><td class="num">50\.00<\/td><td class="num">3\.00<\/td><td class="num pos"><strong>147\.00<\/strong><\/td>/,
    );
    expect(top).toMatch(
      /The run's days <span class="muted">2026-11-10 to 2026-11-19<\/span><\/td><td class="num">500\.00</,
    );
    expect(top).toContain('<td class="num neg"><strong>-12.465</strong></td>');
    expect(top).toMatch(
      /<td class="num at-risk some">4,600\.00<br><span class="muted">\+2 unknown<\/span> <span class="muted">\(61\)<\/span><\/td><td class="num">225\.00 <span class="muted">\(3\)<\/span>/,
    );
  });

  it('counts a currency whose only money was a fee on a refused transaction: its net is that fee, below zero', () => {
    const report = morningReport();
    const days = [...report.moneyMoved.days, settlementDay('2026-11-19', 'GBP', '0', '0', '50')];
    const text = renderTable({ ...report, moneyMoved: { ...report.moneyMoved, days } }, [], {
      generatedAt: GENERATED_AT,
    });
    expect(text.slice(0, text.indexOf('tolerance'))).toMatch(/GBP\s+last day\s+0\.00\s+0\.00\s+0\.50\s+-0\.50\n/);
  });
});
