import { CHAR_0, CHAR_MINUS, isDigit, paddedEnd, paddedStart } from './ascii.ts';
import { quoteValue, RuleViolation } from './rule-violation.ts';

/** Position `n` of `m` of an instalment schedule (SCHEDULE) or of a retry sequence (RETRY). */
export interface Position {
  readonly index: number;
  readonly count: number;
}

const OPEN_BRACKET = 91;
const CLOSE_BRACKET = 93;
/** Both numbers land in smallint columns. */
const MAX_POSITION = 32767;

/**
 * SCHEDULE and RETRY are written `[n-m]`: position n of m, 1 <= n <= m. Surrounding spaces are dropped as for
 * every structured column; anything else (no brackets, a sign, `[0-3]`, `[4-3]`, a number beyond smallint) is
 * rejected. An empty value is not a position: the record normalizer turns empty cells into nulls before this rule.
 */
export function normalizePosition(raw: string): Position | RuleViolation {
  const start = paddedStart(raw);
  const end = paddedEnd(raw, start);
  if (end - start < 5 || raw.charCodeAt(start) !== OPEN_BRACKET || raw.charCodeAt(end - 1) !== CLOSE_BRACKET) {
    return notAPosition(raw);
  }
  let i = start + 1;
  let index = 0;
  const indexStart = i;
  for (; i < end - 1 && isDigit(raw.charCodeAt(i)); i++) {
    index = index * 10 + raw.charCodeAt(i) - CHAR_0;
    if (index > MAX_POSITION) return outOfRange(raw);
  }
  if (i === indexStart || raw.charCodeAt(i) !== CHAR_MINUS) return notAPosition(raw);
  i++;
  let count = 0;
  const countStart = i;
  for (; i < end - 1 && isDigit(raw.charCodeAt(i)); i++) {
    count = count * 10 + raw.charCodeAt(i) - CHAR_0;
    if (count > MAX_POSITION) return outOfRange(raw);
  }
  if (i === countStart || i !== end - 1) return notAPosition(raw);
  if (index < 1 || index > count) {
    return new RuleViolation(`${quoteValue(raw)} is not a position n of m with 1 <= n <= m`);
  }
  return { index, count };
}

function notAPosition(raw: string): RuleViolation {
  return new RuleViolation(`${quoteValue(raw)} is not a position of the form [n-m]`);
}

function outOfRange(raw: string): RuleViolation {
  return new RuleViolation(`${quoteValue(raw)} has a position above ${MAX_POSITION}`);
}
