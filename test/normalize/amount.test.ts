import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CURRENCIES } from '@recon/protocol';
import { normalizeAmount } from '../../src/normalize/amount.ts';
import { RuleViolation } from '../../src/normalize/rule-violation.ts';

const BIGINT_MAX = 9223372036854775807n;
const BIGINT_MIN = -9223372036854775808n;

/** The service's format: major units, a dot, the currency's decimals but never fewer than two (`100.00` JPY). */
function formatAsTheService(minor: bigint, minorUnits: number): string {
  const digits = (minor < 0n ? -minor : minor).toString().padStart(minorUnits + 1, '0');
  const major = digits.slice(0, digits.length - minorUnits);
  const fraction = digits.slice(digits.length - minorUnits).padEnd(2, '0');
  return `${minor < 0n ? '-' : ''}${major}.${fraction}`;
}

function reasonOf(result: bigint | RuleViolation): string {
  expect(result).toBeInstanceOf(RuleViolation);
  return (result as RuleViolation).reason;
}

describe('normalizeAmount', () => {
  it.each([
    ['123.90', 'EUR', 12390n],
    ['123.9', 'EUR', 12390n],
    ['123', 'EUR', 12300n],
    ['0.01', 'EUR', 1n],
    ['0', 'EUR', 0n],
    ['-0.00', 'EUR', 0n],
    ['-12.34', 'EUR', -1234n],
    ['007.50', 'EUR', 750n],
    [' 123.90 ', 'EUR', 12390n],
    ['1500', 'JPY', 1500n],
    // The service writes two decimals for every currency: zeros beyond the minor unit are exact.
    ['100.00', 'JPY', 100n],
    ['100.0', 'JPY', 100n],
    ['1.234', 'KWD', 1234n],
    ['1.23', 'KWD', 1230n],
    ['1.2340', 'KWD', 1234n],
    ['0.500', 'BHD', 500n],
    ['1.2345', 'CLF', 12345n],
    ['1.00', 'CLF', 10000n],
    ['123.90', null, 12390n],
    ['92233720368547758.07', 'EUR', BIGINT_MAX],
    ['-92233720368547758.08', 'EUR', BIGINT_MIN],
    ['9223372036854775807', 'JPY', BIGINT_MAX],
    ['0000000000000000000000000012.30', 'EUR', 1230n],
    // Around 2^53, where a float could no longer hold every integer: still exact.
    ['9999999999999.99', 'EUR', 999999999999999n],
    ['99999999999999.99', 'EUR', 9999999999999999n],
    ['90071992547409.93', 'EUR', 9007199254740993n],
    ['-9007199254740993', 'JPY', -9007199254740993n],
    ['900719925474.0993', 'CLF', 9007199254740993n],
  ])('reads %j %s as %s minor units', (raw, currency, expected) => {
    expect(normalizeAmount(raw, currency)).toBe(expected);
  });

  it.each([
    '12,30',
    '12.3.0',
    '1 000.00',
    '12. 30',
    '1e3',
    '1.2e1',
    '+12.30',
    '--1',
    '-',
    '.50',
    '12.',
    '',
    '   ',
    'abc',
    'EUR 12.30',
    '12.30 EUR',
    'NaN',
    'Infinity',
    '0x10',
    '１２',
  ])('rejects %j as not a decimal amount', (raw) => {
    expect(reasonOf(normalizeAmount(raw, 'EUR'))).toBe(`${JSON.stringify(raw)} is not a decimal amount with a dot`);
  });

  it.each([
    ['123.901', 'EUR', '2 for EUR'],
    ['100.50', 'JPY', '0 for JPY'],
    ['100.01', 'JPY', '0 for JPY'],
    ['1.2345', 'KWD', '3 for KWD'],
    ['1.23456', 'CLF', '4 for CLF'],
    ['1.001', null, '2 (no currency given)'],
  ])('rejects %j %s: more decimals than the currency has', (raw, currency, allowed) => {
    expect(reasonOf(normalizeAmount(raw, currency))).toBe(
      `${JSON.stringify(raw)} has more decimals than allowed: ${allowed}`,
    );
  });

  it.each([
    ['92233720368547758.08', 'EUR'],
    ['-92233720368547758.09', 'EUR'],
    ['9223372036854775808', 'JPY'],
    ['100000000000000000000', 'JPY'],
    ['99999999999999999999999999.99', 'EUR'],
  ])('rejects %j %s: beyond a PostgreSQL bigint', (raw, currency) => {
    expect(reasonOf(normalizeAmount(raw, currency))).toBe(
      `${JSON.stringify(raw)} is beyond the range of a bigint in minor units`,
    );
  });

  it('rejects a currency that is not an ISO 4217 code instead of guessing its decimals', () => {
    expect(reasonOf(normalizeAmount('12.30', 'XYZ'))).toBe('"XYZ" is not an ISO 4217 currency code');
  });

  it('gives back any bigint amount in any currency once formatted as the service formats it', () => {
    fc.assert(
      fc.property(
        fc.bigInt({ min: BIGINT_MIN, max: BIGINT_MAX }),
        fc.constantFrom(...CURRENCIES),
        (minor, [code, minorUnits]) => {
          expect(normalizeAmount(formatAsTheService(minor, minorUnits), code)).toBe(minor);
        },
      ),
      { numRuns: 2000 },
    );
  });

  it('reads an amount with fewer decimals than its currency as the same value', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: -(10n ** 15n), max: 10n ** 15n }), (major) => {
        expect(normalizeAmount(major.toString(), 'KWD')).toBe(major * 1000n);
        expect(normalizeAmount(`${major}.5`, 'KWD')).toBe(major * 1000n + (major < 0n ? -500n : 500n));
      }),
    );
  });
});
