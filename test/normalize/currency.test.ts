import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { normalizeCurrency } from '../../src/normalize/currency.ts';
import { CURRENCY_CODES } from '@recon/protocol';
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

  it('accepts every ISO 4217 code in any letter case with surrounding spaces, and stores it upper-case', () => {
    const padding = fc.stringMatching(/^[ \t]{0,3}$/);
    const anyCase = (code: string) =>
      fc
        .array(fc.boolean(), { minLength: 3, maxLength: 3 })
        .map((lower) => [...code].map((letter, i) => (lower[i] ? letter.toLowerCase() : letter)).join(''));
    fc.assert(
      fc.property(
        fc
          .constantFrom(...CURRENCY_CODES)
          .chain((code) => fc.tuple(fc.constant(code), anyCase(code), padding, padding)),
        ([code, written, before, after]) => {
          expect(normalizeCurrency(before + written + after)).toBe(code);
        },
      ),
    );
  });

  it('rejects any three letters that are not a code', () => {
    const known = new Set<string>(CURRENCY_CODES);
    fc.assert(
      fc.property(
        fc.stringMatching(/^[A-Z]{3}$/).filter((letters) => !known.has(letters)),
        (letters) => {
          expect(normalizeCurrency(letters)).toBeInstanceOf(RuleViolation);
        },
      ),
    );
  });

  it.each(['', 'XYZ', 'EURO', 'EU', '978', 'E UR', 'XAU', 'XXX'])('rejects %j', (raw) => {
    const result = normalizeCurrency(raw);
    expect(result).toBeInstanceOf(RuleViolation);
    expect((result as RuleViolation).reason).toBe(`${JSON.stringify(raw)} is not an ISO 4217 currency code`);
  });
});
