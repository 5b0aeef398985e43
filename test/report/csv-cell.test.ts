import { describe, expect, it } from 'vitest';
import { csvCell, csvLine } from '../../src/report/csv-cell.ts';

describe('csv cells safe in a spreadsheet', () => {
  it.each([
    ['=HYPERLINK("http://evil.test","x")', `"'=HYPERLINK(""http://evil.test"",""x"")"`],
    ['=1+1', "'=1+1"],
    ['+1+1', "'+1+1"],
    ['-1+1', "'-1+1"],
    ['@SUM(A1:A2)', "'@SUM(A1:A2)"],
    ['\t=1', "'\t=1"],
    ['\r=1', `"'\r=1"`],
    ['-', "'-"],
    ['-1e3', "'-1e3"],
  ])('neutralizes a formula: %j -> %j', (value, cell) => {
    expect(csvCell(value)).toBe(cell);
  });

  it.each([
    ['-12.50', '-12.50'],
    ['-1250', '-1250'],
    ['0.00', '0.00'],
    ['A-1', 'A-1'],
    ['<script>alert(1)</script>', '<script>alert(1)</script>'],
  ])('leaves plain numbers and text alone: %j', (value, cell) => {
    expect(csvCell(value)).toBe(cell);
  });

  it.each([
    ['a,b', '"a,b"'],
    ['a;b', '"a;b"'],
    ['say "hi"', '"say ""hi"""'],
    ['two\nlines', '"two\nlines"'],
    ['cr\r\nlf', '"cr\r\nlf"'],
  ])('quotes delimiters, quotes and line breaks: %j', (value, cell) => {
    expect(csvCell(value)).toBe(cell);
  });

  it('writes numbers, booleans and null, and ends a line with CRLF', () => {
    expect(csvLine(['x', 3, true, null, '-1'])).toBe('x,3,true,,-1\r\n');
  });
});
