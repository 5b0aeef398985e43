/**
 * The export csv as the service writes it (service-facts.md): `;` delimiter, a header row, `"` quoting with
 * `""` escaping, LF line ends, UTF-8 without BOM. Public samples quote headers containing spaces
 * (`"BILLINGFEES INCL. VAT"`), so values follow the same rule: a field is quoted when it holds a space,
 * the delimiter, a quote or a line break, and written bare otherwise.
 */
const NEEDS_QUOTES = /[ ;"\r\n\t]/;

export function formatCsvField(value: string): string {
  return NEEDS_QUOTES.test(value) ? `"${value.replaceAll('"', '""')}"` : value;
}

export function formatCsvLine(fields: readonly string[]): string {
  return `${fields.map(formatCsvField).join(';')}\n`;
}

/** Header row of `columns`, then one line per row with the rows' values in column order (missing → ""). */
export function formatCsv(columns: readonly string[], rows: readonly Readonly<Record<string, string>>[]): string {
  let csv = formatCsvLine(columns);
  for (const row of rows) csv += formatCsvLine(columns.map((column) => row[column] ?? ''));
  return csv;
}
