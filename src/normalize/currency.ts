import { currencyMinorUnits } from '@recon/protocol';
import { paddedEnd, paddedStart } from './ascii.ts';
import { quoteValue, RuleViolation } from './rule-violation.ts';

/**
 * CURRENCY: an active ISO 4217 code, stored upper-case (the column is char(3)). The amounts of the row are read
 * with its minor unit, so an unknown code is rejected rather than guessed. Surrounding spaces are dropped and a
 * lower-case code is accepted (`eur` is unambiguous); nothing else is altered.
 */
export function normalizeCurrency(raw: string): string | RuleViolation {
  const start = paddedStart(raw);
  const end = paddedEnd(raw, start);
  const code = start === 0 && end === raw.length ? raw : raw.slice(start, end);
  if (currencyMinorUnits(code) !== undefined) return code;
  const upper = code.toUpperCase();
  if (currencyMinorUnits(upper) !== undefined) return upper;
  return new RuleViolation(`${quoteValue(raw)} is not an ISO 4217 currency code`);
}
