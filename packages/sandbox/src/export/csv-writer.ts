/**
 * The export csv as the service writes it (service-facts.md): `;` delimiter, a header row, `"` quoting with
 * `""` escaping, LF line ends, UTF-8 without BOM. A value is quoted only when it must be (it holds the
 * delimiter, a quote or a line break); a header is quoted also when it holds a space, as in the public
 * samples (`"BILLINGFEES INCL. VAT"`), while values such as DATE `2017-03-01 10:28:30` stay bare.
 */
const VALUE_NEEDS_QUOTES = /[;"\r\n]/;
const HEADER_NEEDS_QUOTES = /[ ;"\r\n]/;

export function formatCsvValue(value: string): string {
  return VALUE_NEEDS_QUOTES.test(value) ? quote(value) : value;
}

export function formatCsvHeader(name: string): string {
  return HEADER_NEEDS_QUOTES.test(name) ? quote(name) : name;
}

/** Header row of `columns`, then one line per row with the rows' values in column order (missing → ""). */
export function formatCsv(columns: readonly string[], rows: readonly Readonly<Record<string, string>>[]): string {
  let csv = `${columns.map(formatCsvHeader).join(';')}\n`;
  for (const row of rows) {
    const line = columns.map((column) => formatCsvValue(row[column] ?? '')).join(';');
    // A one-column row with an empty value would be a blank line, which many readers skip: quote it.
    csv += `${line === '' ? '""' : line}\n`;
  }
  return csv;
}

function quote(text: string): string {
  return `"${text.replaceAll('"', '""')}"`;
}
