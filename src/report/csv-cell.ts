import { csvBounded } from './untrusted-text.ts';

/**
 * csv that opens safely in a spreadsheet. A cell starting with `=`, `+`, `-`, `@`, tab or CR is a formula
 * to Excel, LibreOffice and Google Sheets (OWASP "CSV injection"): it gets a leading `'`, which they show as
 * text. A cell that is exactly a decimal number (an amount such as `-12.50`) is left alone so that it still
 * sums: a spreadsheet reads it as the number it is, never as a formula. A cell longer than a spreadsheet holds
 * (32,767 characters in Excel, which spills the rest into the next cells) is cut, its length said.
 *
 * Two dialects: `en`, RFC 4180's comma and a decimal point; `fr`, what a spreadsheet set to French reads, a semicolon
 * and a decimal comma. Only amounts (CsvAmount) take the decimal comma: text is written as it is, whatever it looks
 * like.
 */
export const CSV_LOCALES = ['en', 'fr'] as const;
export type CsvLocale = (typeof CSV_LOCALES)[number];

export interface CsvDialect {
  readonly separator: ',' | ';';
  readonly decimalMark: '.' | ',';
}

export const CSV_DIALECTS: Readonly<Record<CsvLocale, CsvDialect>> = {
  en: { separator: ',', decimalMark: '.' },
  fr: { separator: ';', decimalMark: ',' },
};

/** An amount, as minorToDecimal writes it (`-1234.56`): a cell written with the dialect's decimal mark. */
export class CsvAmount {
  readonly decimal: string;
  constructor(decimal: string) {
    this.decimal = decimal;
  }
}

const FORMULA_START = /^[=+\-@\t\r]/;
const PLAIN_NUMBER = /^-?\d+([.,]\d+)?$/;
const NEEDS_QUOTES = /[",;\r\n]/;

export function csvCell(
  value: string | number | boolean | CsvAmount | null,
  dialect: CsvDialect = CSV_DIALECTS.en,
): string {
  if (value === null) return '';
  if (value instanceof CsvAmount) return value.decimal.replace('.', dialect.decimalMark);
  let text = String(value);
  if (FORMULA_START.test(text) && !PLAIN_NUMBER.test(text)) text = `'${text}`;
  text = csvBounded(text);
  // Quoting both `,` and `;` lets a spreadsheet split the line the same way whichever separator it is set to.
  return NEEDS_QUOTES.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

/** One record, CRLF-terminated as RFC 4180 says. */
export function csvLine(
  values: readonly (string | number | boolean | CsvAmount | null)[],
  dialect: CsvDialect = CSV_DIALECTS.en,
): string {
  return values.map((value) => csvCell(value, dialect)).join(dialect.separator) + '\r\n';
}
