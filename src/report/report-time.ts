/** Instants in reports are UTC, always said so: accountants compare them with exports from other zones. */

/** `2026-11-03T02:00:00Z` (milliseconds only when there are some): for csv and json. */
export function isoInstant(date: Date): string {
  return date.toISOString().replace('.000Z', 'Z');
}

/** `2026-11-03 02:00 UTC` (seconds only when there are some): for people. */
export function humanInstant(date: Date): string {
  const iso = date.toISOString();
  const seconds = iso.slice(16, 23) === ':00.000' ? '' : iso.slice(16, 19);
  return `${iso.slice(0, 10)} ${iso.slice(11, 16)}${seconds} UTC`;
}

/** A timestamp written as text in an explanation; shown as written when it does not parse. */
export function humanTimestampText(text: string): string {
  const date = new Date(text);
  return Number.isNaN(date.getTime()) ? text : humanInstant(date);
}
