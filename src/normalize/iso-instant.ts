import { paddedEnd, paddedStart } from './ascii.ts';
import { daysFromCivil, daysInMonth, formatUtcInstant, SECONDS_PER_DAY, SECONDS_PER_HOUR } from './civil-time.ts';
import { quoteValue, RuleViolation } from './rule-violation.ts';

/**
 * An ISO 8601 date and time with its UTC offset (orders' created_at) becomes the UTC instant
 * `YYYY-MM-DDTHH:MM:SS[.ffffff]Z` for a timestamptz column.
 *
 * - Extended format only: `YYYY-MM-DDThh:mm[:ss[.f...]]` then `Z` or `±hh:mm`, `±hhmm`, `±hh`. A space may stand for
 *   the `T` (what PostgreSQL and many exporters write), `t` and `z` are read like `T` and `Z` (RFC 3339).
 * - The offset is required: without one the instant is ambiguous, and guessing a zone would shift every order.
 * - A real calendar date and time: month 01-12, the month's days with leap years, hour 00-23, minute and second
 *   00-59 (no leap second, which PostgreSQL cannot store), offset hours 00-23 and minutes 00-59.
 * - Fractions of a second are kept to the microsecond (timestamptz's precision); digits beyond must be zeros, as
 *   PostgreSQL would otherwise round the instant silently.
 * - The UTC instant is computed here, so the database never sees an offset it might read differently, and it must
 *   fall in the years 0001-9999.
 */
const ISO_INSTANT =
  /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d+))?)?(?:([Zz])|([+-])(\d{2})(?::?(\d{2}))?)?$/;
const MICROSECOND_DIGITS = 6;

export function normalizeIsoInstant(raw: string): string | RuleViolation {
  const start = paddedStart(raw);
  const end = paddedEnd(raw, start);
  const match = ISO_INSTANT.exec(start === 0 && end === raw.length ? raw : raw.slice(start, end));
  if (match === null)
    return new RuleViolation(`${quoteValue(raw)} is not an ISO 8601 date and time (e.g. 2024-05-01T12:00:00+02:00)`);
  const [
    ,
    yearText,
    monthText,
    dayText,
    hourText,
    minuteText,
    secondText,
    fraction,
    zulu,
    sign,
    offsetHourText,
    offsetMinuteText,
  ] = match;
  if (zulu === undefined && sign === undefined) {
    return new RuleViolation(`${quoteValue(raw)} has no UTC offset (Z or +hh:mm), so the instant it means is unknown`);
  }

  const year = Number(yearText);
  const month = Number(monthText);
  const day = Number(dayText);
  if (year < 1 || month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) {
    return new RuleViolation(`${quoteValue(raw)} is not a calendar date`);
  }
  const hour = Number(hourText);
  const minute = Number(minuteText);
  const second = secondText === undefined ? 0 : Number(secondText);
  if (hour > 23 || minute > 59 || second > 59) return new RuleViolation(`${quoteValue(raw)} is not a time of day`);
  const offsetHours = offsetHourText === undefined ? 0 : Number(offsetHourText);
  const offsetMinutes = offsetMinuteText === undefined ? 0 : Number(offsetMinuteText);
  if (offsetHours > 23 || offsetMinutes > 59)
    return new RuleViolation(`${quoteValue(raw)} has an offset that is not a time of day`);

  let kept = '';
  if (fraction !== undefined) {
    if (/[^0]/.test(fraction.slice(MICROSECOND_DIGITS))) {
      return new RuleViolation(
        `${quoteValue(raw)} is more precise than a microsecond, which the database cannot store`,
      );
    }
    kept = fraction.slice(0, MICROSECOND_DIGITS);
  }

  const offsetSeconds = (sign === '-' ? -1 : 1) * (offsetHours * SECONDS_PER_HOUR + offsetMinutes * 60);
  const wallSeconds =
    daysFromCivil(year, month, day) * SECONDS_PER_DAY + hour * SECONDS_PER_HOUR + minute * 60 + second;
  const instant = formatUtcInstant(wallSeconds - offsetSeconds);
  if (instant === null) return new RuleViolation(`${quoteValue(raw)} is outside the years 0001-9999 in UTC`);
  return kept === '' ? instant : `${instant.slice(0, -1)}.${kept}Z`;
}
