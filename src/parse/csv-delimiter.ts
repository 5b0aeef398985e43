export type CsvDelimiter = ';' | ',';

const QUOTE = 0x22;
const LF = 0x0a;
const CR = 0x0d;
const SEMICOLON = 0x3b;
const COMMA = 0x2c;

/**
 * Picks the delimiter from the header line: the one of `;` and `,` that occurs more often outside quotes
 * (`;` on a tie, the service's own delimiter, which also covers a one-column header). Reading the header
 * rather than sampling data rows keeps a `,` inside an unquoted address from deciding for `,`.
 *
 * Returns undefined while `text` does not yet hold the whole first non-empty line and more may come.
 */
export function detectDelimiter(text: string, final: boolean): CsvDelimiter | undefined {
  let semicolons = 0;
  let commas = 0;
  let quoted = false;
  let lineHasContent = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      quoted = !quoted;
      lineHasContent = true;
    } else if (quoted) {
      continue;
    } else if (c === LF) {
      if (lineHasContent) return semicolons >= commas ? ';' : ',';
    } else if (c === SEMICOLON) {
      semicolons++;
      lineHasContent = true;
    } else if (c === COMMA) {
      commas++;
      lineHasContent = true;
    } else if (c !== CR) {
      lineHasContent = true;
    }
  }
  if (!final) return undefined;
  return semicolons >= commas ? ';' : ',';
}
