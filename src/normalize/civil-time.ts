/**
 * Proleptic Gregorian calendar arithmetic on integers (H. Hinnant's days-from-civil algorithms). Date.UTC is
 * avoided on purpose: it maps years 0-99 to 1900-1999, and a Date per row costs an allocation on the hot path.
 */
export const SECONDS_PER_DAY = 86_400;
export const SECONDS_PER_HOUR = 3600;

export function isLeapYear(year: number): boolean {
  return year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
}

const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31] as const;

export function daysInMonth(year: number, month: number): number {
  return month === 2 && isLeapYear(year) ? 29 : DAYS_IN_MONTH[month - 1]!;
}

/** Days since 1970-01-01 of a valid calendar date. */
export function daysFromCivil(year: number, month: number, day: number): number {
  const y = month <= 2 ? year - 1 : year;
  const era = Math.floor(y / 400);
  const yearOfEra = y - era * 400;
  const dayOfYear = Math.floor((153 * (month > 2 ? month - 3 : month + 9) + 2) / 5) + day - 1;
  const dayOfEra = yearOfEra * 365 + Math.floor(yearOfEra / 4) - Math.floor(yearOfEra / 100) + dayOfYear;
  return era * 146_097 + dayOfEra - 719_468;
}

/** `00` to `99`: formatting a field is an array lookup. */
export const TWO_DIGITS = Array.from({ length: 100 }, (_, n) => String(n).padStart(2, '0'));

/**
 * `YYYY-MM-DDTHH:MM:SSZ` for seconds since the epoch, or null when the year falls outside 0001-9999 (a value
 * PostgreSQL and ISO 8601's basic form cannot both take).
 */
export function formatUtcInstant(epochSeconds: number): string | null {
  const days = Math.floor(epochSeconds / SECONDS_PER_DAY);
  let secondOfDay = epochSeconds - days * SECONDS_PER_DAY;
  const shifted = days + 719_468;
  const era = Math.floor(shifted / 146_097);
  const dayOfEra = shifted - era * 146_097;
  const yearOfEra = Math.floor(
    (dayOfEra - Math.floor(dayOfEra / 1460) + Math.floor(dayOfEra / 36_524) - Math.floor(dayOfEra / 146_096)) / 365,
  );
  const dayOfYear = dayOfEra - (365 * yearOfEra + Math.floor(yearOfEra / 4) - Math.floor(yearOfEra / 100));
  const monthIndex = Math.floor((5 * dayOfYear + 2) / 153);
  const day = dayOfYear - Math.floor((153 * monthIndex + 2) / 5) + 1;
  const month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9;
  const year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0);
  if (year < 1 || year > 9999) return null;
  const hour = Math.floor(secondOfDay / 3600);
  secondOfDay -= hour * 3600;
  const minute = Math.floor(secondOfDay / 60);
  const second = secondOfDay - minute * 60;
  const yearText = year >= 1000 ? String(year) : String(year).padStart(4, '0');
  return `${yearText}-${TWO_DIGITS[month]}-${TWO_DIGITS[day]}T${TWO_DIGITS[hour]}:${TWO_DIGITS[minute]}:${TWO_DIGITS[second]}Z`;
}
