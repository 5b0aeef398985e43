/**
 * A plain aligned table for a terminal: a header row, a rule, then the rows; null shows as empty. Columns
 * listed in `rightAligned` (amounts, counts) are padded on the left so that they line up on their last digit.
 */
export function formatTextTable(
  columns: readonly string[],
  rows: readonly (readonly (string | number | null)[])[],
  rightAligned: readonly number[] = [],
): string {
  const cells = rows.map((row) => row.map((value) => (value === null ? '' : String(value).replace(/\s+/g, ' '))));
  const widths = columns.map((column, i) => Math.max(column.length, ...cells.map((row) => row[i]?.length ?? 0)));
  const line = (values: readonly string[]) =>
    values
      .map((value, i) => (rightAligned.includes(i) ? value.padStart(widths[i]!) : value.padEnd(widths[i]!)))
      .join('  ')
      .trimEnd();
  return [line(columns), line(widths.map((width) => '-'.repeat(width))), ...cells.map(line)].join('\n');
}
