import { isDigit, paddedEnd, paddedStart } from './ascii.ts';
import { quoteValue, RuleViolation } from './rule-violation.ts';

const PADDED = ['', '000', '00', '0', ''] as const;

/**
 * EXECCODE: the export writes result codes without leading zeros (`0`, `2`, `4001`); recon stores the documented
 * four-digit form (`0000`, `0002`, `4001`). One to four ASCII digits, nothing else: a sign, a fifth digit or a
 * letter is not an execution code.
 *
 * Surrounding spaces and tabs are tolerated and dropped: they cannot change which code is meant, and rejecting a
 * row over them would lose a transaction for nothing. Spaces inside (`4 001`) are rejected.
 */
export function normalizeExecCode(raw: string): string | RuleViolation {
  const start = paddedStart(raw);
  const end = paddedEnd(raw, start);
  const length = end - start;
  if (length < 1 || length > 4) return invalid(raw);
  for (let i = start; i < end; i++) {
    if (!isDigit(raw.charCodeAt(i))) return invalid(raw);
  }
  const digits = start === 0 && end === raw.length ? raw : raw.slice(start, end);
  return length === 4 ? digits : PADDED[length] + digits;
}

function invalid(raw: string): RuleViolation {
  return new RuleViolation(`${quoteValue(raw)} is not an execution code of 1 to 4 digits`);
}
