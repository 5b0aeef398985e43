import { parse } from 'csv-parse/sync';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { formatCsv, formatCsvHeader, formatCsvValue } from '../../src/export/csv-writer.ts';

describe('formatCsv', () => {
  it('writes a ;-delimited header row and rows in column order, LF line ends', () => {
    const csv = formatCsv(
      ['ORDERID', 'DATE', 'AMOUNT', 'BILLINGFEES INCL. VAT', 'EXECCODE'],
      [
        {
          ORDERID: 'A-1',
          DATE: '2026-06-01 08:15:30',
          AMOUNT: '150.00',
          'BILLINGFEES INCL. VAT': '3.90',
          EXECCODE: '0',
        },
        {
          EXECCODE: '4001',
          ORDERID: 'A-2',
          AMOUNT: '19.99',
          'BILLINGFEES INCL. VAT': '0.00',
          DATE: '2026-06-02 00:00:00',
        },
      ],
    );
    expect(csv).toBe(
      'ORDERID;DATE;AMOUNT;"BILLINGFEES INCL. VAT";EXECCODE\n' +
        'A-1;2026-06-01 08:15:30;150.00;3.90;0\n' +
        'A-2;2026-06-02 00:00:00;19.99;0.00;4001\n',
    );
  });

  it('writes a missing value as an empty field', () => {
    expect(formatCsv(['A', 'B'], [{ A: 'x' }])).toBe('A;B\nx;\n');
  });

  it.each([
    ['plain', 'plain'],
    ['', ''],
    ['2017-03-01 10:28:30', '2017-03-01 10:28:30'],
    ['12 rue de la Paix', '12 rue de la Paix'],
    ['a;b', '"a;b"'],
    ['say "hi"', '"say ""hi"""'],
    ['two\nlines', '"two\nlines"'],
    ['crlf\r\n', '"crlf\r\n"'],
  ])('writes the value %j as %j', (value, expected) => {
    expect(formatCsvValue(value)).toBe(expected);
  });

  it('keeps a one-column row with an empty value from being a blank line', () => {
    expect(formatCsv(['RETRY'], [{ RETRY: '' }, { RETRY: '[1-2]' }])).toBe('RETRY\n""\n[1-2]\n');
    const parsed = parse(formatCsv(['RETRY'], [{ RETRY: '' }]), {
      delimiter: ';',
      columns: true,
      skip_empty_lines: true,
    });
    expect(parsed).toEqual([{ RETRY: '' }]);
  });

  it('quotes headers that hold a space, and only those', () => {
    expect(formatCsvHeader('BILLINGFEES INCL. VAT')).toBe('"BILLINGFEES INCL. VAT"');
    expect(formatCsvHeader('RULE APPLIED')).toBe('"RULE APPLIED"');
    expect(formatCsvHeader('3DSECURE')).toBe('3DSECURE');
  });

  it('is read back unchanged by csv-parse with ; as delimiter', () => {
    const header = fc.stringMatching(/^[A-Z0-9][A-Z0-9. ]{0,19}$/);
    fc.assert(
      fc.property(
        fc.uniqueArray(header, { minLength: 1, maxLength: 6 }),
        fc.array(fc.array(fc.string({ unit: 'grapheme' }), { minLength: 6, maxLength: 6 }), { maxLength: 5 }),
        (columns, values) => {
          const rows = values.map((row) => Object.fromEntries(columns.map((column, i) => [column, row[i]!])));
          const parsed = parse(formatCsv(columns, rows), { delimiter: ';', columns: true, relax_quotes: false });
          expect(parsed).toEqual(rows);
        },
      ),
    );
  });
});
