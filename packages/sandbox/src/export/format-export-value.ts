import { currencyMinorUnits } from '@recon/protocol';

/**
 * Values of an export row written the way the service writes them (service-facts.md): every value a string,
 * AMOUNT in major units with two decimals, EXECCODE without leading zeros. DATE is the protocol's formatWallClock.
 */

/**
 * An amount in the currency's minor units, written in major units as the service writes AMOUNT: two decimals,
 * or as many as the currency's ISO 4217 minor unit when it has more. 12390n EUR → '123.90', 1000n JPY →
 * '1000.00', 1234n KWD → '1.234'. Exact: bigint arithmetic only, never a float on the money path.
 */
export function formatMinorUnits(minorUnits: bigint, currency: string): string {
  const units = currencyMinorUnits(currency) ?? 2;
  const scale = 10n ** BigInt(units);
  const sign = minorUnits < 0n ? '-' : '';
  const absolute = minorUnits < 0n ? -minorUnits : minorUnits;
  const fraction = units === 0 ? '' : String(absolute % scale).padStart(units, '0');
  return `${sign}${absolute / scale}.${fraction.padEnd(2, '0')}`;
}

/** '0000' → '0', '0002' → '2', '4001' → '4001'. */
export function formatExecCode(execCode: string): string {
  return execCode.replace(/^0+(?=\d)/, '');
}

/** `[index-count]`, e.g. `[1-3]`. */
export function formatPosition(position: { readonly index: number; readonly count: number }): string {
  return `[${position.index}-${position.count}]`;
}
