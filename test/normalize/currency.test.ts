import { describe, expect, it } from 'vitest';
import { normalizeCurrency } from '../../src/normalize/currency.ts';
import { RuleViolation } from '../../src/normalize/rule-violation.ts';

describe('normalizeCurrency', () => {
  it.each([
    ['EUR', 'EUR'],
    ['JPY', 'JPY'],
    [' KWD ', 'KWD'],
    ['eur', 'EUR'],
    ['Chf', 'CHF'],
  ])('accepts %j as %j', (raw, expected) => {
    expect(normalizeCurrency(raw)).toBe(expected);
  });

  it.each(['', 'XYZ', 'EURO', 'EU', '978', 'E UR', 'XAU', 'XXX'])('rejects %j', (raw) => {
    const result = normalizeCurrency(raw);
    expect(result).toBeInstanceOf(RuleViolation);
    expect((result as RuleViolation).reason).toBe(`${JSON.stringify(raw)} is not an ISO 4217 currency code`);
  });
});
