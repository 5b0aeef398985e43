import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { formatWallClock } from '@recon/protocol';
import { formatExecCode, formatMinorUnits, formatPosition } from '@recon/sandbox';
import { normalizeAmount } from '../../src/normalize/amount.ts';
import { createDateNormalizer } from '../../src/normalize/date.ts';

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
  ])(
    '%s %s minor units → %s: major units, at least two decimals, as many as the currency has',
    (minor, currency, expected) => {
      expect(formatMinorUnits(minor, currency)).toBe(expected);
    },
  );

  it('is read back exactly by the ingest normalizer, in every currency, beyond float precision', () => {
    fc.assert(
      fc.property(
        fc.bigInt({ min: -(10n ** 17n), max: 10n ** 17n }),
        fc.constantFrom('EUR', 'JPY', 'KWD', 'CLF', 'USD'),
        (minor, currency) => {
          const text = formatMinorUnits(minor, currency);
          expect(text).toMatch(/^-?\d+\.\d{2,4}$/);
          expect(normalizeAmount(text, currency)).toBe(minor);
        },
      ),
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

describe('DATE as the sandbox writes it (formatWallClock)', () => {
  it('is read back by the ingest normalizer as the instant it was written from', () => {
    const zones = ['UTC', 'Asia/Tokyo', 'Asia/Kolkata', '+05:30'];
    fc.assert(
      fc.property(
        fc.integer({ min: Date.UTC(1990, 0, 1) / 1000, max: Date.UTC(2040, 0, 1) / 1000 }),
        fc.constantFrom(...zones),
        (epochSeconds, zone) => {
          const instant = new Date(epochSeconds * 1000);
          expect(createDateNormalizer(zone)(formatWallClock(instant, zone))).toBe(
            instant.toISOString().replace('.000Z', 'Z'),
          );
        },
      ),
    );
  });
});

it('formatPosition writes [n-m]', () => {
  expect(formatPosition({ index: 2, count: 4 })).toBe('[2-4]');
});
