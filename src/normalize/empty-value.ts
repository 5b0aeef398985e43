import { isPadding, paddedStart } from './ascii.ts';

/**
 * The export writes an absent value as an empty string; recon stores NULL. Only the exact empty string counts:
 * text columns are kept as written, so a value of spaces stays a value.
 */
export function emptyToNull(raw: string): string | null {
  return raw === '' ? null : raw;
}

/**
 * Structured columns (amounts, codes, dates, positions) ignore surrounding spaces, so for them a value made only
 * of spaces is as empty as an empty string.
 */
export function isBlank(raw: string): boolean {
  return raw.length === 0 || (isPadding(raw.charCodeAt(0)) && paddedStart(raw) === raw.length);
}
