import { currencyMinorUnits } from '@recon/protocol';

/**
 * Amounts are integers of minor units (digit strings or bigint); people read them in major units with the
 * currency's ISO 4217 exponent (JPY 0, EUR 2, KWD 3). Everything here is string arithmetic: no float ever
 * touches an amount, so 90071992547409.93 EUR prints as exactly that.
 */
const INTEGER = /^-?\d+$/;

export function isMinorUnits(value: string): boolean {
  return INTEGER.test(value);
}

/** Digits after the decimal point; two for a missing or unknown code, as for export amounts without CURRENCY. */
export function currencyExponent(currency: string | null): number {
  return (currency === null ? undefined : currencyMinorUnits(currency.trim())) ?? 2;
}

/** `-123456` EUR -> `-1234.56`: plain, for csv cells a spreadsheet reads as a number. */
export function minorToDecimal(minor: string | bigint, currency: string | null): string {
  const text = typeof minor === 'bigint' ? minor.toString() : minor;
  if (!INTEGER.test(text)) throw new RangeError(`not an amount in minor units: ${JSON.stringify(text)}`);
  const negative = text.startsWith('-');
  const digits = (negative ? text.slice(1) : text).replace(/^0+(?=\d)/, '');
  const sign = negative && digits !== '0' ? '-' : '';
  const exponent = currencyExponent(currency);
  if (exponent === 0) return sign + digits;
  const padded = digits.padStart(exponent + 1, '0');
  return `${sign}${padded.slice(0, -exponent)}.${padded.slice(-exponent)}`;
}

/** `-123456789` EUR -> `-1,234,567.89`: grouped by thousands, for people. */
export function formatAmount(minor: string | bigint, currency: string | null): string {
  const decimal = minorToDecimal(minor, currency);
  const point = decimal.indexOf('.');
  const whole = point === -1 ? decimal : decimal.slice(0, point);
  return whole.replace(/\B(?=(\d{3})+(?!\d))/g, ',') + (point === -1 ? '' : decimal.slice(point));
}

/** settled - expected, exactly. */
export function differenceMinor(settled: string, expected: string): string {
  return (BigInt(settled) - BigInt(expected)).toString();
}
