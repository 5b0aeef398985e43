import { describe, expect, it } from 'vitest';
import { currencyExponent, differenceMinor, formatAmount, minorToDecimal } from '../../src/report/money-format.ts';

describe('money formatting by ISO 4217 exponent', () => {
  it.each([
    ['JPY', '1234567', '1234567', '1,234,567'],
    ['JPY', '-5', '-5', '-5'],
    ['EUR', '123456', '1234.56', '1,234.56'],
    ['EUR', '5', '0.05', '0.05'],
    ['EUR', '-5', '-0.05', '-0.05'],
    ['EUR', '0', '0.00', '0.00'],
    ['EUR', '-0', '0.00', '0.00'],
    ['EUR', '000120', '1.20', '1.20'],
    ['KWD', '1234', '1.234', '1.234'],
    ['KWD', '-1234567', '-1234.567', '-1,234.567'],
    ['KWD', '7', '0.007', '0.007'],
    ['CLF', '12345', '1.2345', '1.2345'],
    // Past 2^53: a float would round these; string arithmetic does not.
    ['EUR', '9007199254740993', '90071992547409.93', '90,071,992,547,409.93'],
    ['JPY', '-9223372036854775808', '-9223372036854775808', '-9,223,372,036,854,775,808'],
  ])('%s %s -> %s / %s', (currency, minor, decimal, grouped) => {
    expect(minorToDecimal(minor, currency)).toBe(decimal);
    expect(formatAmount(minor, currency)).toBe(grouped);
    expect(formatAmount(BigInt(minor), currency)).toBe(grouped);
  });

  it('reads a missing or unknown currency with two decimals, as the export does without CURRENCY', () => {
    expect(currencyExponent(null)).toBe(2);
    expect(currencyExponent('XXX')).toBe(2);
    expect(minorToDecimal('1999', null)).toBe('19.99');
  });

  it('refuses what is not an integer of minor units', () => {
    for (const bad of ['1.5', '', '1e3', ' 12', '--1', '0x10'])
      expect(() => minorToDecimal(bad, 'EUR')).toThrow(RangeError);
  });

  it('subtracts exactly', () => {
    expect(differenceMinor('9007199254740993', '9007199254740992')).toBe('1');
    expect(differenceMinor('0', '12345')).toBe('-12345');
  });
});
