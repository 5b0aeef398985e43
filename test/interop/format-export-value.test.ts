import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { formatExecCode, formatExportDate, formatMinorUnits, formatPosition, isKnownTimeZone } from '@recon/sandbox';
import { normalizeAmount } from '../../src/normalize/amount.ts';

describe('formatMinorUnits', () => {
  it.each([
    [0n, '0.00'],
    [5n, '0.05'],
    [99n, '0.99'],
    [100n, '1.00'],
    [12390n, '123.90'],
    [15000n, '150.00'],
    [-1234n, '-12.34'],
    [123456789012345678901234567890n, '1234567890123456789012345678.90'],
  ])('%s EUR minor units → %s', (minor, expected) => {
    expect(formatMinorUnits(minor, 'EUR')).toBe(expected);
  });

  it.each([
    [1000n, 'JPY', '1000.00'],
    [5n, 'JPY', '5.00'],
    [1234n, 'KWD', '1.234'],
    [-5n, 'KWD', '-0.005'],
    [12345n, 'CLF', '1.2345'],
  ])('%s %s minor units → %s: major units, at least two decimals, as many as the currency has', (minor, currency, expected) => {
    expect(formatMinorUnits(minor, currency)).toBe(expected);
  });

  it('is read back exactly by the ingest normalizer, in every currency, beyond float precision', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: -(10n ** 17n), max: 10n ** 17n }), fc.constantFrom('EUR', 'JPY', 'KWD', 'CLF', 'USD'), (minor, currency) => {
        const text = formatMinorUnits(minor, currency);
        expect(text).toMatch(/^-?\d+\.\d{2,4}$/);
        expect(normalizeAmount(text, currency)).toBe(minor);
      }),
    );
  });
});

describe('formatExecCode', () => {
  it.each([
    ['0000', '0'],
    ['0002', '2'],
    ['0003', '3'],
    ['2005', '2005'],
    ['4001', '4001'],
  ])('%s → %s', (code, expected) => expect(formatExecCode(code)).toBe(expected));
});

describe('formatExportDate', () => {
  const instant = new Date('2026-03-29T00:30:05Z');

  it('writes YYYY-MM-DD hh:mm:ss in UTC', () => {
    expect(formatExportDate(instant, 'UTC')).toBe('2026-03-29 00:30:05');
  });

  it('applies the zone, daylight saving included', () => {
    expect(formatExportDate(instant, 'Europe/Paris')).toBe('2026-03-29 01:30:05');
    expect(formatExportDate(new Date('2026-03-29T01:30:05Z'), 'Europe/Paris')).toBe('2026-03-29 03:30:05');
    expect(formatExportDate(instant, 'America/New_York')).toBe('2026-03-28 20:30:05');
    expect(formatExportDate(instant, 'Asia/Kolkata')).toBe('2026-03-29 06:00:05');
  });

  it('writes midnight as 00, never 24', () => {
    expect(formatExportDate(new Date('2026-01-01T23:00:00Z'), 'Europe/Paris')).toBe('2026-01-02 00:00:00');
  });

  it('knows IANA zones and refuses made-up ones', () => {
    expect(isKnownTimeZone('Europe/Paris')).toBe(true);
    expect(isKnownTimeZone('UTC')).toBe(true);
    expect(isKnownTimeZone('Mars/Olympus_Mons')).toBe(false);
    expect(() => formatExportDate(instant, 'Mars/Olympus_Mons')).toThrow(RangeError);
  });
});

it('formatPosition writes [n-m]', () => {
  expect(formatPosition({ index: 2, count: 4 })).toBe('[2-4]');
});
