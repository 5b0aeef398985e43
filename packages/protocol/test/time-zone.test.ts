import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { canonicalTimeZone, dateInZone, formatWallClock, isTimeZone, wallClockAt } from '@recon/protocol';

describe('isTimeZone', () => {
  it('knows IANA zones in any letter case and offsets, and refuses made-up ones', () => {
    expect(isTimeZone('Europe/Paris')).toBe(true);
    expect(isTimeZone('UTC')).toBe(true);
    expect(isTimeZone('europe/paris')).toBe(true);
    expect(isTimeZone('+05:30')).toBe(true);
    expect(isTimeZone('Mars/Olympus_Mons')).toBe(false);
    expect(isTimeZone('')).toBe(false);
  });
});

describe('canonicalTimeZone', () => {
  it('names the zone as Intl resolves it, and throws RangeError for an unknown one', () => {
    expect(canonicalTimeZone('europe/paris')).toBe('Europe/Paris');
    expect(canonicalTimeZone('UTC')).toBe('UTC');
    expect(() => canonicalTimeZone('Mars/Olympus_Mons')).toThrow(RangeError);
  });
});

describe('wallClockAt', () => {
  it('reads the zone wall clock of an instant, given as a Date or as milliseconds', () => {
    const instant = new Date('2026-03-29T01:30:05Z');
    const paris = { year: 2026, month: 3, day: 29, hour: 3, minute: 30, second: 5 };
    expect(wallClockAt(instant, 'Europe/Paris')).toEqual(paris);
    expect(wallClockAt(instant.getTime(), 'Europe/Paris')).toEqual(paris);
  });

  it('gives astronomical years before the common era', () => {
    expect(wallClockAt(Date.UTC(-1, 0, 1), 'UTC')).toMatchObject({ year: -1, month: 1, day: 1 });
    expect(wallClockAt(Date.UTC(-1, 0, 1), 'Europe/Paris')).toMatchObject({ year: -1, month: 1, day: 1 });
  });

  it('reads UTC, under any of its names, and fixed offsets as Intl does', () => {
    const zones = ['UTC', 'utc', 'Etc/UTC', 'GMT', 'Zulu', '+05:30', '-03:00', '+00:00', '-00:45'];
    fc.assert(
      fc.property(
        fc.integer({ min: Date.UTC(-200, 0, 1), max: Date.UTC(9999, 11, 31) }),
        fc.constantFrom(...zones),
        (ms, zone) => {
          expect(wallClockAt(ms, zone)).toEqual(intlWallClock(ms, zone));
        },
      ),
    );
  });
});

/** The wall clock as Intl reads it, part by part: what wallClockAt does for a zone whose offset changes. */
function intlWallClock(ms: number, timeZone: string) {
  const parts = new Intl.DateTimeFormat('en-US', {
    timeZone,
    hourCycle: 'h23',
    era: 'short',
    year: 'numeric',
    month: 'numeric',
    day: 'numeric',
    hour: 'numeric',
    minute: 'numeric',
    second: 'numeric',
  }).formatToParts(ms);
  const part = (type: string) => Number(parts.find((p) => p.type === type)!.value);
  const year = part('year');
  return {
    year: parts.find((p) => p.type === 'era')!.value === 'BC' ? 1 - year : year,
    month: part('month'),
    day: part('day'),
    hour: part('hour'),
    minute: part('minute'),
    second: part('second'),
  };
}

describe('dateInZone', () => {
  it('is the calendar date in the zone, which may differ from the date in UTC', () => {
    const instant = new Date('2026-06-02T23:30:00Z');
    expect(dateInZone(instant, 'UTC')).toBe('2026-06-02');
    expect(dateInZone(instant, 'Europe/Paris')).toBe('2026-06-03');
    expect(dateInZone(instant, 'America/Los_Angeles')).toBe('2026-06-02');
  });
});

describe('formatWallClock', () => {
  const instant = new Date('2026-03-29T00:30:05Z');

  it('writes YYYY-MM-DD hh:mm:ss in UTC', () => {
    expect(formatWallClock(instant, 'UTC')).toBe('2026-03-29 00:30:05');
  });

  it('applies the zone, daylight saving included', () => {
    expect(formatWallClock(instant, 'Europe/Paris')).toBe('2026-03-29 01:30:05');
    expect(formatWallClock(new Date('2026-03-29T01:30:05Z'), 'Europe/Paris')).toBe('2026-03-29 03:30:05');
    expect(formatWallClock(instant, 'America/New_York')).toBe('2026-03-28 20:30:05');
    expect(formatWallClock(instant, 'Asia/Kolkata')).toBe('2026-03-29 06:00:05');
  });

  it('writes midnight as 00, never 24', () => {
    expect(formatWallClock(new Date('2026-01-01T23:00:00Z'), 'Europe/Paris')).toBe('2026-01-02 00:00:00');
  });

  it('throws RangeError for a made-up zone', () => {
    expect(() => formatWallClock(instant, 'Mars/Olympus_Mons')).toThrow(RangeError);
  });
});
