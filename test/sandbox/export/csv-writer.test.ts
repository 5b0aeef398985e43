import { parse } from 'csv-parse/sync';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { formatCsv, formatCsvField } from '../../../src/sandbox/export/csv-writer.ts';

describe('formatCsv', () => {
  it('writes a ;-delimited header row and rows in column order, LF line ends', () => {
    const csv = formatCsv(
      ['ORDERID', 'AMOUNT', 'BILLINGFEES INCL. VAT', 'EXECCODE'],
      [
        { ORDERID: 'A-1', AMOUNT: '150.00', 'BILLINGFEES INCL. VAT': '3.90', EXECCODE: '0' },
        { EXECCODE: '4001', ORDERID: 'A-2', AMOUNT: '19.99', 'BILLINGFEES INCL. VAT': '0.00' },
      ],
    );
    expect(csv).toBe(
      'ORDERID;AMOUNT;"BILLINGFEES INCL. VAT";EXECCODE\n' + 'A-1;150.00;3.90;0\n' + 'A-2;19.99;0.00;4001\n',
    );
  });

  it('writes a missing value as an empty field', () => {
    expect(formatCsv(['A', 'B'], [{ A: 'x' }])).toBe('A;B\nx;\n');
  });

  it.each([
    ['plain', 'plain'],
    ['', ''],
    ['12 rue de la Paix', '"12 rue de la Paix"'],
    ['a;b', '"a;b"'],
    ['say "hi"', '"say ""hi"""'],
    ['two\nlines', '"two\nlines"'],
    ['crlf\r\n', '"crlf\r\n"'],
  ])('quotes %j as %j', (value, expected) => {
    expect(formatCsvField(value)).toBe(expected);
  });

  it('is read back unchanged by csv-parse with ; as delimiter', () => {
    const header = fc.stringMatching(/^[A-Z0-9. ]{1,20}$/);
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
