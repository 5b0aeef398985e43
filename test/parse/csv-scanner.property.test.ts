import { parse as csvParseSync } from 'csv-parse/sync';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { CsvDelimiter } from '../../src/parse/csv-delimiter.ts';
import { CsvScanner, type CsvRecord } from '../../src/parse/csv-scanner.ts';
import { formatRawRecord } from '../../src/parse/format-raw-record.ts';

// Characters that matter to csv, plus ordinary and multi-unit ones.
const valueChar = fc.constantFrom('a', 'Z', '0', ' ', ';', ',', '"', '\n', '\r', 'é', '€', '日');
const value = fc.string({ unit: valueChar, maxLength: 8 });
const record = fc.array(value, { minLength: 1, maxLength: 6 });

interface CsvFile {
  text: string;
  records: string[][];
  lines: number[];
  delimiter: CsvDelimiter;
}

/** A csv text written the ways exports are: optional quoting, LF or CRLF, empty lines between records. */
const csvFile = fc
  .record({
    delimiter: fc.constantFrom<CsvDelimiter>(';', ','),
    eol: fc.constantFrom('\n', '\r\n'),
    rows: fc.array(fc.record({ values: record, quoteAll: fc.boolean(), emptyLinesBefore: fc.nat(2) }), {
      maxLength: 12,
    }),
    finalEol: fc.boolean(),
  })
  .map(({ delimiter, eol, rows, finalEol }): CsvFile => {
    let text = '';
    let line = 1;
    const lines: number[] = [];
    rows.forEach((row, index) => {
      if (index > 0) {
        text += eol.repeat(1 + row.emptyLinesBefore);
        line += 1 + row.emptyLinesBefore;
      }
      lines.push(line);
      const field = (v: string) => {
        const needsQuotes =
          row.quoteAll || v.includes(delimiter) || v.includes('"') || v.includes('\n') || v.includes('\r');
        return needsQuotes ? `"${v.replaceAll('"', '""')}"` : v;
      };
      // A record of one empty value would be an empty line; exports quote it.
      const written = row.values.length === 1 && row.values[0] === '' ? '""' : row.values.map(field).join(delimiter);
      text += written;
      line += (written.match(/\n/g) ?? []).length;
    });
    if (finalEol && rows.length > 0) text += eol;
    return { text, records: rows.map((row) => row.values), lines, delimiter };
  });

function scan(text: string, delimiter: CsvDelimiter, pieces: readonly number[]): CsvRecord[] {
  const scanner = new CsvScanner(delimiter, 'property.csv');
  const out: CsvRecord[] = [];
  let start = 0;
  for (const piece of pieces) {
    scanner.push(text.slice(start, start + piece), out);
    start += piece;
  }
  scanner.push(text.slice(start), out);
  scanner.finish(out);
  return out;
}

describe('CsvScanner (property)', () => {
  it('reads back what was written, on the right lines, however the text is cut into chunks', () => {
    fc.assert(
      fc.property(csvFile, fc.array(fc.nat(40), { maxLength: 10 }), (file, pieces) => {
        const records = scan(file.text, file.delimiter, pieces);
        expect(records.map((r) => r.values)).toEqual(file.records);
        expect(records.map((r) => r.line)).toEqual(file.lines);
      }),
      { numRuns: 500 },
    );
  });

  it('agrees with csv-parse', () => {
    fc.assert(
      fc.property(csvFile, (file) => {
        const expected = csvParseSync(file.text, {
          delimiter: file.delimiter,
          record_delimiter: ['\r\n', '\n'],
          relax_column_count: true,
          skip_empty_lines: true,
        });
        expect(scan(file.text, file.delimiter, []).map((r) => r.values)).toEqual(expected);
      }),
      { numRuns: 500 },
    );
  });

  it('formatRawRecord writes text that scans back to the same values', () => {
    fc.assert(
      fc.property(record, fc.constantFrom<CsvDelimiter>(';', ','), (values, delimiter) => {
        fc.pre(!(values.length === 1 && values[0] === ''));
        const raw = formatRawRecord(values, delimiter);
        expect(scan(raw, delimiter, []).map((r) => r.values)).toEqual([values]);
      }),
      { numRuns: 500 },
    );
  });
});
