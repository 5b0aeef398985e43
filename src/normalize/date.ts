import { CHAR_0, CHAR_MINUS, CHAR_SPACE, isDigit, paddedEnd, paddedStart } from './ascii.ts';
import { daysFromCivil, daysInMonth, formatUtcInstant, SECONDS_PER_DAY } from './civil-time.ts';
import { quoteValue, RuleViolation } from './rule-violation.ts';
import { createWallTimeResolver } from './wall-time-resolver.ts';

const CHAR_COLON = 58;
const DATE_LENGTH = 19;

/**
 * DATE: `YYYY-MM-DD hh:mm:ss` is wall-clock time in the export's TIMEZONE (any IANA zone; UTC by default) and
 * becomes a UTC instant `YYYY-MM-DDTHH:MM:SSZ` for the timestamptz column.
 *
 * - Exactly that shape (surrounding spaces dropped): no `T`, no fraction, no offset, no date alone.
 * - A real calendar date and time: month 01-12, the month's days with leap years (`2023-02-29` and `02-30` are
 *   rejected, `2024-02-29` is fine), hour 00-23, minute and second 00-59 (no leap second), year 0001-9999.
 * - Daylight saving changes are resolved like RFC 5545 and Temporal's 'compatible' disambiguation (see
 *   wall-time-resolver.ts): a time in the spring-forward gap moves forward by the gap's length (02:30
 *   Europe/Paris on the change day is 01:30Z); a time repeated at fall-back is its earlier occurrence, with the
 *   summer offset (02:30 Europe/Paris on the change day is 00:30Z).
 *
 * The zone is checked once here (an unknown zone is a ReconError CONFIG naming it), not per row.
 */
export function createDateNormalizer(timezone: string): (raw: string) => string | RuleViolation {
  const resolver = createWallTimeResolver(timezone);

  if (resolver.fixedOffsetSeconds === 0) {
    // UTC: validating the text is all there is to do; the instant is the same digits rearranged.
    return (raw) => {
      const start = paddedStart(raw);
      const wallSeconds = parseWallTime(raw, start, paddedEnd(raw, start));
      if (typeof wallSeconds !== 'number') return wallSeconds;
      return `${raw.slice(start, start + 10)}T${raw.slice(start + 11, start + DATE_LENGTH)}Z`;
    };
  }

  return (raw) => {
    const start = paddedStart(raw);
    const wallSeconds = parseWallTime(raw, start, paddedEnd(raw, start));
    if (typeof wallSeconds !== 'number') return wallSeconds;
    return formatUtcInstant(resolver.toEpochSeconds(wallSeconds)) ?? outOfRange(raw);
  };
}

/** Seconds since 1970-01-01 00:00 on the wall clock, or why the text is not a date and time. */
function parseWallTime(raw: string, start: number, end: number): number | RuleViolation {
  if (end - start !== DATE_LENGTH) return notADate(raw);
  for (let i = 0; i < DATE_LENGTH; i++) {
    const code = raw.charCodeAt(start + i);
    const expected = SEPARATORS[i]!;
    if (expected === 0 ? !isDigit(code) : code !== expected) return notADate(raw);
  }
  const year = digitsAt(raw, start, 4);
  const month = digitsAt(raw, start + 5, 2);
  const day = digitsAt(raw, start + 8, 2);
  const hour = digitsAt(raw, start + 11, 2);
  const minute = digitsAt(raw, start + 14, 2);
  const second = digitsAt(raw, start + 17, 2);
  if (year < 1 || month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) {
    return new RuleViolation(`${quoteValue(raw)} is not a calendar date`);
  }
  if (hour > 23 || minute > 59 || second > 59) return new RuleViolation(`${quoteValue(raw)} is not a time of day`);
  return daysFromCivil(year, month, day) * SECONDS_PER_DAY + hour * 3600 + minute * 60 + second;
}

/** The character expected at each position of `YYYY-MM-DD hh:mm:ss`; 0 for a digit. */
const SEPARATORS = [0, 0, 0, 0, CHAR_MINUS, 0, 0, CHAR_MINUS, 0, 0, CHAR_SPACE, 0, 0, CHAR_COLON, 0, 0, CHAR_COLON, 0, 0];

function digitsAt(raw: string, start: number, count: number): number {
  let value = 0;
  for (let i = start; i < start + count; i++) value = value * 10 + raw.charCodeAt(i) - CHAR_0;
  return value;
}

function notADate(raw: string): RuleViolation {
  return new RuleViolation(`${quoteValue(raw)} is not a date and time of the form YYYY-MM-DD hh:mm:ss`);
}

function outOfRange(raw: string): RuleViolation {
  return new RuleViolation(`${quoteValue(raw)} falls outside the years 0001-9999 in UTC`);
}
