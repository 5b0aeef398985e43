/**
 * Values in PostgreSQL's COPY text format: columns split by tab, rows by newline, `\N` for null, and a
 * backslash escape for the four characters that would otherwise end a value or a row.
 * This runs once per value of every row, so the common case (nothing to escape) only scans the string.
 */
export const COPY_NULL = '\\N';

const BACKSLASH = 92;
const TAB = 9;
const LF = 10;
const CR = 13;
const NUL = 0;

/** PostgreSQL text cannot hold U+0000; a caller decides whether that rejects the row or replaces the character. */
export class NulCharacterError extends Error {
  constructor() {
    super('a value contains a NUL character, which PostgreSQL text cannot store');
    this.name = 'NulCharacterError';
  }
}

export function escapeCopyText(value: string): string {
  for (let i = 0; i < value.length; i++) {
    const c = value.charCodeAt(i);
    if (c === BACKSLASH || c < 32) {
      if (c === BACKSLASH || c === TAB || c === LF || c === CR || c === NUL) return escapeFrom(value, i);
    }
  }
  return value;
}

function escapeFrom(value: string, start: number): string {
  let out = value.slice(0, start);
  let run = start;
  for (let i = start; i < value.length; i++) {
    const c = value.charCodeAt(i);
    let escaped: string;
    if (c === BACKSLASH) escaped = '\\\\';
    else if (c === TAB) escaped = '\\t';
    else if (c === LF) escaped = '\\n';
    else if (c === CR) escaped = '\\r';
    else if (c === NUL) throw new NulCharacterError();
    else continue;
    out += value.slice(run, i) + escaped;
    run = i + 1;
  }
  return out + value.slice(run);
}

/** A nullable value of any type the loader stages: text is escaped, numbers and bigints are digits. */
export function copyValue(value: string | number | bigint | null): string {
  if (value === null) return COPY_NULL;
  return typeof value === 'string' ? escapeCopyText(value) : String(value);
}
