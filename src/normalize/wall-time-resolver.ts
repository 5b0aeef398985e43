import { canonicalTimeZone, wallClockAt } from '@recon/protocol';
import { ReconError } from '../errors.ts';
import { daysFromCivil, SECONDS_PER_DAY, SECONDS_PER_HOUR } from './civil-time.ts';

/**
 * Turns a wall-clock time of one IANA time zone into an instant, deterministically, the way RFC 5545 and
 * Temporal's `disambiguation: 'compatible'` do:
 * - a wall time that does not exist (the spring-forward gap) is moved forward by the length of the gap, which is
 *   the same as reading it with the offset in force before the transition: 02:30 in Europe/Paris on the morning
 *   clocks jump from 02:00 to 03:00 is 03:30 CEST, i.e. 01:30Z;
 * - a wall time that occurs twice (the fall-back overlap) is the earlier instant, its first occurrence with the
 *   summer offset: 02:30 in Europe/Paris on the morning clocks go back from 03:00 to 02:00 is 00:30Z.
 *
 * Offsets come from Intl (the protocol's wallClockAt), which is slow (microseconds a call) while DATE is converted
 * on every row. So zones with a fixed offset (UTC, Etc/GMT+5, +05:30) are resolved once, and for the others the offset
 * of each wall-clock hour is cached: an hour without a transition maps to one offset, found with a few Intl
 * calls the first time and a Map lookup after. Hours that contain a transition (two a year) are resolved row by
 * row. Like Temporal's reference implementation, the resolution assumes a zone changes its offset at most once
 * within a day either side of the time asked about.
 */
export interface WallTimeResolver {
  /** The zone's canonical name, as Intl resolved it. */
  readonly zone: string;
  /** Seconds east of UTC when the zone never changes its offset, null otherwise. */
  readonly fixedOffsetSeconds: number | null;
  /**
   * The offset (seconds east of UTC) of every wall time of the wall-clock hour starting at `wallHourStart`
   * (seconds since 1970-01-01 00:00 on that clock), or NaN when a transition falls in that hour.
   */
  offsetOfWallHour(wallHourStart: number): number;
  /** Seconds since the epoch of a wall-clock time given as seconds since 1970-01-01 00:00 on that clock. */
  toEpochSeconds(wallSeconds: number): number;
}

/** Caps the per-hour cache (a few years of hours) so memory stays constant on any input. */
const MAX_CACHED_HOURS = 50_000;
const FIXED_OFFSET_ZONE = /^(?:UTC|Etc\/GMT[+-]\d{1,2}|[+-]\d{2}(?::?\d{2})?)$/;

export function createWallTimeResolver(timezone: string): WallTimeResolver {
  const zone = knownZone(timezone);
  const offsetAt = (epochSeconds: number): number => offsetOfInstant(timezone, epochSeconds);

  if (FIXED_OFFSET_ZONE.test(zone)) {
    const fixedOffsetSeconds = offsetAt(0);
    return {
      zone,
      fixedOffsetSeconds,
      offsetOfWallHour: () => fixedOffsetSeconds,
      toEpochSeconds: (wallSeconds) => wallSeconds - fixedOffsetSeconds,
    };
  }

  /** The offset that applies to the wall time when exactly one instant has it; NaN in a gap or an overlap. */
  const uniqueOffset = (wallSeconds: number): number => {
    const before = offsetAt(wallSeconds - SECONDS_PER_DAY);
    const after = offsetAt(wallSeconds + SECONDS_PER_DAY);
    const fitsBefore = offsetAt(wallSeconds - before) === before;
    if (before === after) return fitsBefore ? before : NaN;
    const fitsAfter = offsetAt(wallSeconds - after) === after;
    return fitsBefore !== fitsAfter ? (fitsBefore ? before : after) : NaN;
  };

  const offsetByHour = new Map<number, number>();
  const offsetOfWallHour = (wallHourStart: number): number => {
    let offset = offsetByHour.get(wallHourStart);
    if (offset === undefined) {
      const atStart = uniqueOffset(wallHourStart);
      offset = atStart === uniqueOffset(wallHourStart + SECONDS_PER_HOUR - 1) ? atStart : NaN;
      if (offsetByHour.size >= MAX_CACHED_HOURS) offsetByHour.clear();
      offsetByHour.set(wallHourStart, offset);
    }
    return offset;
  };

  const resolveCompatibly = (wallSeconds: number): number => {
    const before = offsetAt(wallSeconds - SECONDS_PER_DAY);
    const after = offsetAt(wallSeconds + SECONDS_PER_DAY);
    const earlier = wallSeconds - Math.max(before, after);
    const later = wallSeconds - Math.min(before, after);
    if (offsetAt(earlier) === Math.max(before, after)) return earlier;
    if (offsetAt(later) === Math.min(before, after)) return later;
    // In a gap: read with the offset in force before the transition, i.e. move forward by the gap's length.
    return wallSeconds - before;
  };

  const toEpochSeconds = (wallSeconds: number): number => {
    const offset = offsetOfWallHour(Math.floor(wallSeconds / SECONDS_PER_HOUR) * SECONDS_PER_HOUR);
    return Number.isNaN(offset) ? resolveCompatibly(wallSeconds) : wallSeconds - offset;
  };

  return { zone, fixedOffsetSeconds: null, offsetOfWallHour, toEpochSeconds };
}

/** The zone's canonical name; an unknown zone is the caller's configuration mistake, said as such. */
function knownZone(timezone: string): string {
  try {
    return canonicalTimeZone(timezone);
  } catch (error) {
    throw new ReconError(
      'CONFIG',
      `unknown time zone ${JSON.stringify(timezone)}: expected an IANA zone such as UTC or Europe/Paris`,
      { cause: error },
    );
  }
}

/** Seconds east of UTC in force at the instant: the zone's wall clock then, minus the instant. */
function offsetOfInstant(timezone: string, epochSeconds: number): number {
  const wall = wallClockAt(epochSeconds * 1000, timezone);
  const wallSeconds =
    daysFromCivil(wall.year, wall.month, wall.day) * SECONDS_PER_DAY +
    wall.hour * SECONDS_PER_HOUR +
    wall.minute * 60 +
    wall.second;
  return wallSeconds - epochSeconds;
}
