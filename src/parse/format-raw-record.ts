import type { CsvDelimiter } from './csv-delimiter.ts';

/**
 * The csv text of one record, quoted where needed, so that a rejected row can be stored and read back as
 * it stood in the file (modulo quoting style: values are quoted only when they must be).
 */
export function formatRawRecord(values: string[], delimiter: CsvDelimiter): string {
  let raw = '';
  for (let i = 0; i < values.length; i++) {
    const value = values[i]!;
    if (i > 0) raw += delimiter;
    const needsQuotes =
      value.includes(delimiter) || value.includes('"') || value.includes('\n') || value.includes('\r');
    raw += needsQuotes ? `"${value.replaceAll('"', '""')}"` : value;
  }
  return raw;
}
