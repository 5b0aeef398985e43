import { csvBounded } from './untrusted-text.ts';

/**
 * csv that opens safely in a spreadsheet. A cell starting with `=`, `+`, `-`, `@`, tab or CR is a formula
 * to Excel, LibreOffice and Google Sheets (OWASP "CSV injection"): it gets a leading `'`, which they show as
 * text. A cell that is exactly a decimal number (an amount such as `-12.50`) is left alone so that it still
 * sums: a spreadsheet reads it as the number it is, never as a formula. A cell longer than a spreadsheet holds
 * (32,767 characters in Excel, which spills the rest into the next cells) is cut, its length said.
 */

const FORMULA_START = /^[=+\-@\t\r]/;
const PLAIN_NUMBER = /^-?\d+(\.\d+)?$/;
const NEEDS_QUOTES = /[",;\r\n]/;

export function csvCell(value: string | number | boolean | null): string {
  if (value === null) return '';
  let text = String(value);
  if (FORMULA_START.test(text) && !PLAIN_NUMBER.test(text)) text = `'${text}`;
  text = csvBounded(text);
  // Quoting `;` too lets a spreadsheet set to a `;` list separator split the line the same way.
  return NEEDS_QUOTES.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

/** One record, CRLF-terminated as RFC 4180 says. */
export function csvLine(values: readonly (string | number | boolean | null)[]): string {
  return values.map(csvCell).join(',') + '\r\n';
}
