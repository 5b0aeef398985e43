import { CHAR_0, CHAR_MINUS, CHAR_SPACE, isDigit, paddedEnd, paddedStart } from './ascii.ts';
import {
  daysFromCivil,
  daysInMonth,
  formatUtcInstant,
  SECONDS_PER_DAY,
  SECONDS_PER_HOUR,
  TWO_DIGITS,
} from './civil-time.ts';
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
 * The zone is checked once here (an unknown zone is a ReconError CONFIG naming it), not per row. Rows of an
 * export come roughly in date order, so the normalizer remembers the last wall-clock hour: within it the UTC
 * text is a prefix computed once plus the row's minutes and seconds, shifted when the offset is not whole hours.
 */
export function createDateNormalizer(timezone: string): (raw: string) => string | RuleViolation {
  const resolver = createWallTimeResolver(timezone);
  const isUtc = resolver.fixedOffsetSeconds === 0;

  let lastHourKey = -1;
  /** UTC `YYYY-MM-DDTHH` of the last hour's first minute and of the UTC hour after it; null to go the slow way. */
  let lastPrefix: string | null = null;
  let lastNextPrefix = '';
  /** UTC minute of the last hour's first minute: 0 for offsets in whole hours. */
  let lastFirstMinute = 0;

  const rememberHour = (wallHourStart: number): void => {
    lastPrefix = null;
    const offset = resolver.offsetOfWallHour(wallHourStart);
    // A transition in the hour (NaN) or an offset with seconds (old local mean times) take the slow way.
    if (offset % 60 !== 0) return;
    const firstInstant = formatUtcInstant(wallHourStart - offset);
    const nextHourInstant = formatUtcInstant(wallHourStart - offset + SECONDS_PER_HOUR);
    // So does an hour at the edge of the years 0001-9999, where the slow way says which rows fall outside.
    if (firstInstant === null || nextHourInstant === null) return;
    lastPrefix = firstInstant.slice(0, 13);
    lastNextPrefix = nextHourInstant.slice(0, 13);
    lastFirstMinute = Number(firstInstant.slice(14, 16));
  };

  return (raw) => {
    const start = paddedStart(raw);
    if (paddedEnd(raw, start) - start !== DATE_LENGTH || !hasDateTimeShape(raw, start)) return notADate(raw);
    const year = twoDigitsAt(raw, start) * 100 + twoDigitsAt(raw, start + 2);
    const month = twoDigitsAt(raw, start + 5);
    const day = twoDigitsAt(raw, start + 8);
    const hour = twoDigitsAt(raw, start + 11);
    if (year < 1 || month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) {
      return new RuleViolation(`${quoteValue(raw)} is not a calendar date`);
    }
    const minute = twoDigitsAt(raw, start + 14);
    if (hour > 23 || minute > 59 || twoDigitsAt(raw, start + 17) > 59) {
      return new RuleViolation(`${quoteValue(raw)} is not a time of day`);
    }
    if (isUtc) return `${raw.slice(start, start + 10)}T${raw.slice(start + 11, start + DATE_LENGTH)}Z`;

    const hourKey = ((year * 100 + month) * 100 + day) * 100 + hour;
    if (hourKey !== lastHourKey) {
      lastHourKey = hourKey;
      rememberHour(wallHourStartOf(year, month, day, hour));
    }
    if (lastPrefix !== null) {
      if (lastFirstMinute === 0) return `${lastPrefix}${raw.slice(start + 13, start + DATE_LENGTH)}Z`;
      const utcMinute = lastFirstMinute + minute;
      const prefix = utcMinute < 60 ? lastPrefix : lastNextPrefix;
      return `${prefix}:${TWO_DIGITS[utcMinute % 60]}${raw.slice(start + 16, start + DATE_LENGTH)}Z`;
    }
    const wallSeconds = wallHourStartOf(year, month, day, hour) + minute * 60 + twoDigitsAt(raw, start + 17);
    return formatUtcInstant(resolver.toEpochSeconds(wallSeconds)) ?? outOfRange(raw);
  };
}

function wallHourStartOf(year: number, month: number, day: number, hour: number): number {
  return daysFromCivil(year, month, day) * SECONDS_PER_DAY + hour * SECONDS_PER_HOUR;
}

/** `dddd-dd-dd dd:dd:dd` at `start` (the length is checked by the caller). */
function hasDateTimeShape(raw: string, start: number): boolean {
  for (let i = 0; i < DATE_LENGTH; i++) {
    const code = raw.charCodeAt(start + i);
    const separator = SEPARATORS[i]!;
    if (separator === 0 ? !isDigit(code) : code !== separator) return false;
  }
  return true;
}

/** The character expected at each position of `YYYY-MM-DD hh:mm:ss`; 0 for a digit. */
const SEPARATORS = [
  0,
  0,
  0,
  0,
  CHAR_MINUS,
  0,
  0,
  CHAR_MINUS,
  0,
  0,
  CHAR_SPACE,
  0,
  0,
  CHAR_COLON,
  0,
  0,
  CHAR_COLON,
  0,
  0,
];

function twoDigitsAt(raw: string, index: number): number {
  return (raw.charCodeAt(index) - CHAR_0) * 10 + raw.charCodeAt(index + 1) - CHAR_0;
}

function notADate(raw: string): RuleViolation {
  return new RuleViolation(`${quoteValue(raw)} is not a date and time of the form YYYY-MM-DD hh:mm:ss`);
}

function outOfRange(raw: string): RuleViolation {
  return new RuleViolation(`${quoteValue(raw)} falls outside the years 0001-9999 in UTC`);
}
