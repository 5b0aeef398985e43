import { currencyMinorUnits } from '@recon/protocol';
import { CHAR_0, CHAR_DOT, CHAR_MINUS, isDigit, paddedEnd, paddedStart } from './ascii.ts';
import { quoteValue, RuleViolation } from './rule-violation.ts';

/**
 * The export documents AMOUNT as "a decimal string with a dot and two decimals": two decimals is the format when
 * a file carries no CURRENCY to say otherwise.
 */
export const DEFAULT_MINOR_UNITS = 2;

const BIGINT_MAX = 9223372036854775807n;
const BIGINT_MIN_MAGNITUDE = 9223372036854775808n;

/**
 * AMOUNT and BILLINGFEES INCL. VAT: a decimal string in major units (`123.90`) becomes an exact bigint of minor
 * units (`12390n`), exactly: the digits are read as text into a bigint of minor units, never through a JS number.
 *
 * - The number of decimals follows the currency's ISO 4217 minor unit (JPY 0, EUR 2, KWD 3, CLF 4); `currency`
 *   null (no CURRENCY column, or an empty one) means the export's documented two decimals. An unknown code is
 *   rejected rather than guessed.
 * - Fewer decimals than the currency allows are exact (`123.9` EUR = 12390, `123` EUR = 12300): an integer-looking
 *   value is read as major units too (the old exports with amounts in cents are refused by their header).
 * - More decimals than allowed are rejected, except when every excess digit is a zero: the service writes two
 *   decimals for every currency (`100.00` JPY), and dropping zeros loses nothing.
 * - An optional leading `-`; at least one digit on each side of the dot; surrounding spaces dropped. A comma, a
 *   `+`, spaces inside, an exponent, an empty value or anything else is rejected.
 * - The result must fit a PostgreSQL bigint.
 */
export function normalizeAmount(raw: string, currency: string | null): bigint | RuleViolation {
  if (currency === null) return decimalToMinorUnits(raw, DEFAULT_MINOR_UNITS, null);
  const minorUnits = currencyMinorUnits(currency);
  if (minorUnits === undefined) return new RuleViolation(`${quoteValue(currency)} is not an ISO 4217 currency code`);
  return decimalToMinorUnits(raw, minorUnits, currency);
}

function decimalToMinorUnits(raw: string, minorUnits: number, currency: string | null): bigint | RuleViolation {
  let i = paddedStart(raw);
  const end = paddedEnd(raw, i);
  const negative = i < end && raw.charCodeAt(i) === CHAR_MINUS;
  if (negative) i++;

  const integerStart = i;
  while (i < end && isDigit(raw.charCodeAt(i))) i++;
  const integerEnd = i;
  if (integerEnd === integerStart) return notAnAmount(raw);

  let fractionStart = end;
  let fractionEnd = end;
  if (i < end) {
    if (raw.charCodeAt(i) !== CHAR_DOT) return notAnAmount(raw);
    fractionStart = ++i;
    while (i < end && isDigit(raw.charCodeAt(i))) i++;
    fractionEnd = i;
    if (fractionEnd === fractionStart || fractionEnd !== end) return notAnAmount(raw);
  }

  let keptFractionEnd = fractionEnd;
  if (fractionEnd - fractionStart > minorUnits) {
    keptFractionEnd = fractionStart + minorUnits;
    for (let j = keptFractionEnd; j < fractionEnd; j++) {
      if (raw.charCodeAt(j) !== CHAR_0) return tooManyDecimals(raw, minorUnits, currency);
    }
  }

  // Leading zeros say nothing and would only lengthen the digits read below.
  let significantStart = integerStart;
  while (significantStart < integerEnd - 1 && raw.charCodeAt(significantStart) === CHAR_0) significantStart++;
  const missingDecimals = minorUnits - (keptFractionEnd - fractionStart);
  const digitCount = integerEnd - significantStart + (keptFractionEnd - fractionStart) + missingDecimals;

  // Past 19 digits nothing fits (and BigInt is spared a huge string); at 19 the comparison decides.
  if (digitCount > 19) return outOfRange(raw);
  // The minor units are read as one digit string by BigInt: no JS number, integer or not, ever holds money.
  const magnitude = BigInt(
    raw.slice(significantStart, integerEnd) + raw.slice(fractionStart, keptFractionEnd) + '0'.repeat(missingDecimals),
  );
  if (digitCount === 19 && magnitude > (negative ? BIGINT_MIN_MAGNITUDE : BIGINT_MAX)) return outOfRange(raw);
  return negative ? -magnitude : magnitude;
}

function notAnAmount(raw: string): RuleViolation {
  return new RuleViolation(`${quoteValue(raw)} is not a decimal amount with a dot`);
}

function tooManyDecimals(raw: string, minorUnits: number, currency: string | null): RuleViolation {
  const allowed = currency === null ? `${minorUnits} (no currency given)` : `${minorUnits} for ${currency}`;
  return new RuleViolation(`${quoteValue(raw)} has more decimals than allowed: ${allowed}`);
}

function outOfRange(raw: string): RuleViolation {
  return new RuleViolation(`${quoteValue(raw)} is beyond the range of a bigint in minor units`);
}
