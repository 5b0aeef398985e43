/**
 * Text that anybody may have typed (notes, names, order ids, reasons, warnings, file names) is bounded in every
 * format: a 100 kB note must not make a report of megabytes, nor a csv cell longer than a spreadsheet holds. What is
 * cut says how long it was.
 */

/** The first characters of a note a report shows; the whole note is in reporting.exception_actions. */
export const NOTE_SHOWN = 300;
/** Names and logins (the function takes at most 100). */
export const NAME_SHOWN = 100;
/** Order ids, transaction ids, account identifiers. */
export const ID_SHOWN = 200;
/** Reasons, warnings, file names: a sentence, or a list of ids. */
export const TEXT_SHOWN = 1000;
/** What Excel holds in a cell: a longer csv cell is cut there, or spills into the next cells. */
export const CSV_CELL_MAX = 32_767;

/**
 * `text` whole when it has at most `shown` characters; else its first `shown` characters, then
 * `… (100,000 characters)`. A surrogate pair is never cut in half.
 */
export function bounded(text: string, shown: number): string {
  if (text.length <= shown) return text;
  let end = shown;
  const last = text.charCodeAt(end - 1);
  if (last >= 0xd800 && last <= 0xdbff) end -= 1;
  return `${text.slice(0, end)}… (${text.length.toLocaleString('en-US')} characters)`;
}

/** A csv cell of at most CSV_CELL_MAX characters, its length said when cut (the words need 40 at most). */
export function csvBounded(text: string): string {
  return bounded(text, CSV_CELL_MAX - 40);
}
