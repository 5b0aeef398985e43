import { CHAR_0, CHAR_MINUS, isDigit, paddedEnd, paddedStart } from './ascii.ts';
import { quoteValue, RuleViolation } from './rule-violation.ts';

const BIGINT_MAX = 9223372036854775807n;
const BIGINT_MIN = -9223372036854775808n;

/**
 * An amount already in minor units, as a database hands it over as text (`12390`): an optional `-` and digits,
 * surrounding spaces dropped, read by BigInt from the digits (never a JS number), within a PostgreSQL bigint.
 * A dot, an exponent or anything else is rejected: a minor-unit column with decimals (`123.90`) is far more
 * likely major units by mistake than cents with a zero fraction.
 */
export function normalizeMinorUnits(raw: string): bigint | RuleViolation {
  const start = paddedStart(raw);
  const end = paddedEnd(raw, start);
  const digitsStart = start < end && raw.charCodeAt(start) === CHAR_MINUS ? start + 1 : start;
  if (digitsStart === end) return notMinorUnits(raw);
  for (let i = digitsStart; i < end; i++) if (!isDigit(raw.charCodeAt(i))) return notMinorUnits(raw);
  // Leading zeros aside, more than 19 digits cannot fit; checking the length first spares BigInt a huge string.
  let significant = digitsStart;
  while (significant < end - 1 && raw.charCodeAt(significant) === CHAR_0) significant++;
  if (end - significant > 19) return outOfRange(raw);
  const value = BigInt(raw.slice(start, end));
  if (value > BIGINT_MAX || value < BIGINT_MIN) return outOfRange(raw);
  return value;
}

function notMinorUnits(raw: string): RuleViolation {
  return new RuleViolation(`${quoteValue(raw)} is not a whole number of minor units`);
}

function outOfRange(raw: string): RuleViolation {
  return new RuleViolation(`${quoteValue(raw)} is beyond the range of a bigint in minor units`);
}
