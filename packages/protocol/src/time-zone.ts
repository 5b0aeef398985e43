/**
 * IANA time zones, one way for both ends: TIMEZONE is a protocol field (the zone of an export's DATE), and recon
 * reads its own settings, its nightly dates and the exports' wall times in zones too. Intl is the one source.
 */

/** A reading of a zone's wall clock. `year` is astronomical (0 is 1 BC), as calendar arithmetic wants it. */
export interface WallClock {
  readonly year: number;
  readonly month: number;
  readonly day: number;
  readonly hour: number;
  readonly minute: number;
  readonly second: number;
}

/** Building a formatter costs far more than using one. Names come from requests too, so the cache is bounded. */
const MAX_CACHED_ZONES = 1000;

interface Zone {
  readonly formatter: Intl.DateTimeFormat;
  /**
   * The zone's one offset from UTC, in milliseconds, for UTC (under any of its names) and a fixed offset such as
   * +05:30; undefined for a zone whose offset changes. A wall clock at a fixed offset is read from the Date itself: an
   * export of a few thousand rows asks for one per row, and formatToParts takes microseconds where that takes a
   * fraction of one.
   */
  readonly fixedOffsetMs: number | undefined;
}

const zones = new Map<string, Zone>();

/** Throws RangeError for a zone Intl does not know; such a name is never cached. */
function zoneOf(timeZone: string): Zone {
  let zone = zones.get(timeZone);
  if (zone === undefined) {
    // h23: midnight is 00, never 24. The era tells the years before 1 AD apart.
    const formatter = new Intl.DateTimeFormat('en-US', {
      timeZone,
      hourCycle: 'h23',
      era: 'short',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
    zone = { formatter, fixedOffsetMs: fixedOffsetOf(formatter.resolvedOptions().timeZone) };
    if (zones.size >= MAX_CACHED_ZONES) zones.clear();
    zones.set(timeZone, zone);
  }
  return zone;
}

/** Intl resolves every name of UTC to `UTC`, and an offset zone to its `+hh:mm` or `-hh:mm`. */
function fixedOffsetOf(resolved: string): number | undefined {
  if (resolved === 'UTC') return 0;
  const offset = /^([+-])(\d{2}):(\d{2})$/.exec(resolved);
  if (!offset) return undefined;
  return (offset[1] === '-' ? -1 : 1) * (Number(offset[2]) * 60 + Number(offset[3])) * 60_000;
}

/** Whether `name` is a zone this runtime knows: an IANA name in any letter case, or an offset such as +05:30. */
export function isTimeZone(name: string): boolean {
  try {
    zoneOf(name);
    return true;
  } catch {
    return false;
  }
}

/** The zone's name as Intl resolves it (`europe/paris` is Europe/Paris). Throws RangeError for an unknown zone. */
export function canonicalTimeZone(name: string): string {
  return zoneOf(name).formatter.resolvedOptions().timeZone;
}

/** The wall clock of `instant` (a Date, or milliseconds since the epoch) in `timeZone`. Throws RangeError for an unknown zone. */
export function wallClockAt(instant: Date | number, timeZone: string): WallClock {
  const { formatter, fixedOffsetMs } = zoneOf(timeZone);
  if (fixedOffsetMs !== undefined) {
    // getUTCFullYear is astronomical already (0 is 1 BC).
    const wall = new Date((typeof instant === 'number' ? instant : instant.getTime()) + fixedOffsetMs);
    return {
      year: wall.getUTCFullYear(),
      month: wall.getUTCMonth() + 1,
      day: wall.getUTCDate(),
      hour: wall.getUTCHours(),
      minute: wall.getUTCMinutes(),
      second: wall.getUTCSeconds(),
    };
  }
  let year = 0;
  let month = 0;
  let day = 0;
  let hour = 0;
  let minute = 0;
  let second = 0;
  let beforeCommonEra = false;
  for (const part of formatter.formatToParts(instant)) {
    switch (part.type) {
      case 'year':
        year = Number(part.value);
        break;
      case 'month':
        month = Number(part.value);
        break;
      case 'day':
        day = Number(part.value);
        break;
      case 'hour':
        hour = Number(part.value);
        break;
      case 'minute':
        minute = Number(part.value);
        break;
      case 'second':
        second = Number(part.value);
        break;
      case 'era':
        beforeCommonEra = part.value === 'BC';
        break;
    }
  }
  return { year: beforeCommonEra ? 1 - year : year, month, day, hour, minute, second };
}

/** `YYYY-MM-DD`, the calendar date of `instant` in `timeZone`. Throws RangeError for an unknown zone. */
export function dateInZone(instant: Date, timeZone: string): string {
  return formatDate(wallClockAt(instant, timeZone));
}

/** `YYYY-MM-DD hh:mm:ss` on the wall clock of `timeZone`, as the service writes an export's DATE. Throws RangeError for an unknown zone. */
export function formatWallClock(instant: Date, timeZone: string): string {
  const wall = wallClockAt(instant, timeZone);
  return `${formatDate(wall)} ${twoDigits(wall.hour)}:${twoDigits(wall.minute)}:${twoDigits(wall.second)}`;
}

function formatDate(wall: WallClock): string {
  return `${String(wall.year).padStart(4, '0')}-${twoDigits(wall.month)}-${twoDigits(wall.day)}`;
}

function twoDigits(value: number): string {
  return String(value).padStart(2, '0');
}
