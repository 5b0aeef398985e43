// Char codes the rules compare against: a few integer checks cost less than a regular expression per value.
export const CHAR_0 = 48;
export const CHAR_9 = 57;
export const CHAR_SPACE = 32;
export const CHAR_TAB = 9;
export const CHAR_MINUS = 45;
export const CHAR_DOT = 46;

export function isDigit(code: number): boolean {
  return code >= CHAR_0 && code <= CHAR_9;
}

/** Spaces and tabs around a value carry no meaning in the structured columns; they are skipped, never inside. */
export function isPadding(code: number): boolean {
  return code === CHAR_SPACE || code === CHAR_TAB;
}

/** Index of the first non-padding character (raw.length when there is none). */
export function paddedStart(raw: string): number {
  let start = 0;
  while (start < raw.length && isPadding(raw.charCodeAt(start))) start++;
  return start;
}

/** Index after the last non-padding character at or after `start`. */
export function paddedEnd(raw: string, start: number): number {
  let end = raw.length;
  while (end > start && isPadding(raw.charCodeAt(end - 1))) end--;
  return end;
}
