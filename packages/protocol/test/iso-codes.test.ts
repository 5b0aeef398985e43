import { describe, expect, it } from 'vitest';
import { COUNTRY_CODES, CURRENCY_CODES, currencyMinorUnits, isCountryCode, isCurrencyCode } from '@recon/protocol';

describe('ISO 3166-1 alpha-2', () => {
  it('holds the 249 assigned codes, each once', () => {
    expect(COUNTRY_CODES).toHaveLength(249);
    expect(new Set(COUNTRY_CODES).size).toBe(249);
  });

  it('accepts assigned codes and refuses reserved or lower-case ones', () => {
    expect(isCountryCode('FR')).toBe(true);
    expect(isCountryCode('AX')).toBe(true);
    for (const code of ['UK', 'EU', 'XK', 'fr', 'FRA', '']) expect(isCountryCode(code)).toBe(false);
  });
});

describe('ISO 4217', () => {
  it('gives the ISO minor units, not the display digits of CLDR', () => {
    expect(currencyMinorUnits('EUR')).toBe(2);
    expect(currencyMinorUnits('JPY')).toBe(0);
    expect(currencyMinorUnits('KWD')).toBe(3);
    expect(currencyMinorUnits('CLF')).toBe(4);
    expect(currencyMinorUnits('HUF')).toBe(2);
    expect(currencyMinorUnits('IQD')).toBe(3);
  });

  it('knows no minor units for unknown, withdrawn or metal codes', () => {
    for (const code of ['XAU', 'XXX', 'HRK', 'eur', 'EURO']) {
      expect(currencyMinorUnits(code)).toBeUndefined();
      expect(isCurrencyCode(code)).toBe(false);
    }
  });

  it('lists each code once, all upper-case letters', () => {
    expect(new Set(CURRENCY_CODES).size).toBe(CURRENCY_CODES.length);
    for (const code of CURRENCY_CODES) expect(code).toMatch(/^[A-Z]{3}$/);
  });
});
