import { describe, expect, it } from 'vitest';
import { CSV_DIALECTS, CsvAmount, csvLine } from '../../src/report/csv-cell.ts';
import { renderCsv } from '../../src/report/report-csv.ts';
import { collect, GENERATED_AT, morningReport, openException, pages } from './morning-report-fixture.ts';

/**
 * The csv as a spreadsheet set to French reads it: cells separated by semicolons, amounts with a decimal comma. Text
 * stays as written, formulas stay defused; the default stays RFC 4180's commas and decimal points.
 */
describe('the csv in French', () => {
  const fr = CSV_DIALECTS.fr;

  it('separates cells by semicolons and writes amounts, and amounts only, with a decimal comma', () => {
    expect(csvLine(['EUR', new CsvAmount('-1234.56'), 12, '3.50', 'a;b', 'x,y'], fr)).toBe(
      'EUR;-1234,56;12;3.50;"a;b";"x,y"\r\n',
    );
    expect(csvLine([new CsvAmount('1500'), new CsvAmount('0.000')], fr)).toBe('1500;0,000\r\n');
    expect(csvLine(['EUR', new CsvAmount('-1234.56')])).toBe('EUR,-1234.56\r\n');
  });

  it('keeps formulas defused, in either dialect', () => {
    expect(csvLine(['=HYPERLINK("http://evil.test")', '+1', '-2;3', '@x'], fr)).toBe(
      `"'=HYPERLINK(""http://evil.test"")";'+1;"'-2;3";'@x\r\n`,
    );
    // A negative amount is a number to a spreadsheet, not a formula: it is left as it is.
    expect(csvLine([new CsvAmount('-0.50')], fr)).toBe('-0,50\r\n');
  });

  it('writes the whole report so, its first section the money', async () => {
    const csv = await collect(
      renderCsv(morningReport(), pages([openException('O-1')]), { generatedAt: GENERATED_AT, locale: 'fr' }),
    );
    const rows = csv.split('\r\n');
    expect(rows[0]).toBe('\uFEFFrecon reconciliation report;run 12');
    expect(rows.slice(3, 6)).toEqual([
      'currency;days;from;to;transactions;gross;refunds;fees;net',
      'EUR;last_day;2026-11-19;2026-11-19;2;200,00;50,00;3,00;147,00',
      'EUR;run;2026-11-10;2026-11-19;3;500,00;50,00;7,50;442,50',
    ]);
    expect(rows).toContain('KWD;last_day;2026-11-19;2026-11-19;1;0,000;12,345;0,120;-12,465');
    expect(rows.find((row) => row.startsWith('O-1;'))).toContain(';EUR;100,00;0,00;-100,00;100,00;1;no;');
    // The default is unchanged.
    const en = await collect(renderCsv(morningReport(), pages([]), { generatedAt: GENERATED_AT }));
    expect(en.split('\r\n')[4]).toBe('EUR,last_day,2026-11-19,2026-11-19,2,200.00,50.00,3.00,147.00');
  });
});
