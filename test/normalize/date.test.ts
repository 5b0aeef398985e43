import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isReconError } from '../../src/errors.ts';
import { createDateNormalizer } from '../../src/normalize/date.ts';
import { RuleViolation } from '../../src/normalize/rule-violation.ts';

const MIN_EPOCH_MS = new Date('0001-01-01T00:00:00Z').getTime();
const MAX_EPOCH_MS = new Date('9999-12-31T23:59:59Z').getTime();

/** An instant as the export writes wall time in UTC: `YYYY-MM-DD hh:mm:ss`. */
function utcWallText(epochMs: number): string {
  const iso = new Date(epochMs).toISOString();
  return `${iso.slice(0, 10)} ${iso.slice(11, 19)}`;
}

function utcInstantText(epochMs: number): string {
  return `${new Date(epochMs).toISOString().slice(0, 19)}Z`;
}

/** The oracle: Intl's own wall clock of an instant in a zone, `YYYY-MM-DD hh:mm:ss`. */
function wallTextIn(zone: string, instant: string): string {
  const format = new Intl.DateTimeFormat('en-US', {
    timeZone: zone,
    hourCycle: 'h23',
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
    hour: '2-digit',
    minute: '2-digit',
    second: '2-digit',
  });
  const parts = Object.fromEntries(format.formatToParts(new Date(instant)).map((p) => [p.type, p.value]));
  return `${parts.year!.padStart(4, '0')}-${parts.month}-${parts.day} ${parts.hour}:${parts.minute}:${parts.second}`;
}

/** A wall time read as if it were UTC: differences between two of them are differences on the wall clock. */
function wallEpochMs(wall: string): number {
  return new Date(`${wall.replace(' ', 'T')}Z`).getTime();
}

function offsetSecondsAt(zone: string, epochMs: number): number {
  return (wallEpochMs(wallTextIn(zone, new Date(epochMs).toISOString())) - epochMs) / 1000;
}

const twoDigits = (max: number, min = 0) => fc.integer({ min, max }).map((n) => String(n).padStart(2, '0'));

/** Wall times of 1990-2040, half of them in the early hours of March, April, October and November. */
const wallTimeAroundDstChanges = fc
  .record({
    year: fc.integer({ min: 1990, max: 2040 }),
    month: fc.oneof(fc.constantFrom(3, 4, 10, 11), fc.integer({ min: 1, max: 12 })),
    day: fc.integer({ min: 1, max: 28 }),
    hour: fc.oneof(fc.integer({ min: 0, max: 3 }), fc.integer({ min: 0, max: 23 })),
    minute: twoDigits(59),
    second: twoDigits(59),
  })
  .map(({ year, month, day, hour, minute, second }) => {
    const pad = (n: number) => String(n).padStart(2, '0');
    return `${year}-${pad(month)}-${pad(day)} ${pad(hour)}:${minute}:${second}`;
  });

describe('createDateNormalizer', () => {
  it.each([
    ['UTC', '2017-03-01 09:28:30', '2017-03-01T09:28:30Z'],
    ['UTC', ' 2017-03-01 09:28:30 ', '2017-03-01T09:28:30Z'],
    ['UTC', '2024-02-29 23:59:59', '2024-02-29T23:59:59Z'],
    ['UTC', '2000-02-29 00:00:00', '2000-02-29T00:00:00Z'],
    ['UTC', '0001-01-01 00:00:00', '0001-01-01T00:00:00Z'],
    ['Etc/UTC', '2017-03-01 10:28:30', '2017-03-01T10:28:30Z'],
    ['utc', '2017-03-01 10:28:30', '2017-03-01T10:28:30Z'],
    ['Etc/GMT+5', '2017-03-01 10:28:30', '2017-03-01T15:28:30Z'],
    ['+05:30', '2017-03-01 10:28:30', '2017-03-01T04:58:30Z'],
    ['Europe/Paris', '2017-03-01 10:28:30', '2017-03-01T09:28:30Z'],
    ['Europe/Paris', '2017-07-01 10:28:30', '2017-07-01T08:28:30Z'],
    ['Europe/Paris', '2017-01-01 00:30:00', '2016-12-31T23:30:00Z'],
    // Spring forward, 2024-03-31: 02:00 CET jumps to 03:00 CEST (01:00Z). The gap moves forward by its length.
    ['Europe/Paris', '2024-03-31 01:59:59', '2024-03-31T00:59:59Z'],
    ['Europe/Paris', '2024-03-31 02:00:00', '2024-03-31T01:00:00Z'],
    ['Europe/Paris', '2024-03-31 02:30:00', '2024-03-31T01:30:00Z'],
    ['Europe/Paris', '2024-03-31 02:59:59', '2024-03-31T01:59:59Z'],
    ['Europe/Paris', '2024-03-31 03:00:00', '2024-03-31T01:00:00Z'],
    ['Europe/Paris', '2024-03-31 03:30:00', '2024-03-31T01:30:00Z'],
    // Fall back, 2024-10-27: 03:00 CEST goes back to 02:00 CET (01:00Z). A repeated time is its first occurrence.
    ['Europe/Paris', '2024-10-27 01:59:59', '2024-10-26T23:59:59Z'],
    ['Europe/Paris', '2024-10-27 02:00:00', '2024-10-27T00:00:00Z'],
    ['Europe/Paris', '2024-10-27 02:30:00', '2024-10-27T00:30:00Z'],
    ['Europe/Paris', '2024-10-27 02:59:59', '2024-10-27T00:59:59Z'],
    ['Europe/Paris', '2024-10-27 03:00:00', '2024-10-27T02:00:00Z'],
    // America/New_York, 2024-03-10 02:00 EST -> 03:00 EDT, 2024-11-03 02:00 EDT -> 01:00 EST.
    ['America/New_York', '2024-03-10 01:30:00', '2024-03-10T06:30:00Z'],
    ['America/New_York', '2024-03-10 02:30:00', '2024-03-10T07:30:00Z'],
    ['America/New_York', '2024-03-10 03:30:00', '2024-03-10T07:30:00Z'],
    ['America/New_York', '2024-11-03 00:30:00', '2024-11-03T04:30:00Z'],
    ['America/New_York', '2024-11-03 01:30:00', '2024-11-03T05:30:00Z'],
    ['America/New_York', '2024-11-03 02:30:00', '2024-11-03T07:30:00Z'],
    // Australia/Lord_Howe changes by 30 minutes: +10:30 standard, +11 summer, at 02:00 local.
    // 2024-10-06 02:00 jumps to 02:30 (15:30Z the day before); 2024-04-07 02:00 goes back to 01:30 (15:00Z).
    ['Australia/Lord_Howe', '2024-10-06 01:59:00', '2024-10-05T15:29:00Z'],
    ['Australia/Lord_Howe', '2024-10-06 02:15:00', '2024-10-05T15:45:00Z'],
    ['Australia/Lord_Howe', '2024-10-06 02:30:00', '2024-10-05T15:30:00Z'],
    ['Australia/Lord_Howe', '2024-10-06 02:45:00', '2024-10-05T15:45:00Z'],
    ['Australia/Lord_Howe', '2024-04-07 01:29:00', '2024-04-06T14:29:00Z'],
    ['Australia/Lord_Howe', '2024-04-07 01:45:00', '2024-04-06T14:45:00Z'],
    ['Australia/Lord_Howe', '2024-04-07 02:00:00', '2024-04-06T15:30:00Z'],
    // Paris mean time, +00:09:21 until 1911: an offset with seconds.
    ['Europe/Paris', '1900-01-01 12:00:00', '1900-01-01T11:50:39Z'],
    // Offsets in quarter and half hours shift the minutes, across the UTC hour too.
    ['Asia/Kathmandu', '2024-05-01 10:14:59', '2024-05-01T04:29:59Z'],
    ['Asia/Kathmandu', '2024-05-01 10:15:00', '2024-05-01T04:30:00Z'],
    ['Asia/Kathmandu', '2024-05-01 10:59:59', '2024-05-01T05:14:59Z'],
    ['Asia/Kolkata', '2024-05-01 00:29:59', '2024-04-30T18:59:59Z'],
    ['Asia/Kolkata', '2024-05-01 00:30:00', '2024-04-30T19:00:00Z'],
    // No DST: the same offset all year.
    ['Asia/Tokyo', '2024-03-31 02:30:00', '2024-03-30T17:30:00Z'],
    ['Asia/Tokyo', '2024-10-27 02:30:00', '2024-10-26T17:30:00Z'],
  ])('%s: %j is %s', (zone, raw, expected) => {
    expect(createDateNormalizer(zone)(raw)).toBe(expected);
  });

  it.each([
    ['2017-03-01T09:28:30', 'is not a date and time of the form YYYY-MM-DD hh:mm:ss'],
    ['2017-03-01', 'is not a date and time of the form YYYY-MM-DD hh:mm:ss'],
    ['2017-03-01 09:28', 'is not a date and time of the form YYYY-MM-DD hh:mm:ss'],
    ['2017-03-01 09:28:30.000', 'is not a date and time of the form YYYY-MM-DD hh:mm:ss'],
    ['2017-03-01 09:28:30Z', 'is not a date and time of the form YYYY-MM-DD hh:mm:ss'],
    ['2017-3-01 09:28:30', 'is not a date and time of the form YYYY-MM-DD hh:mm:ss'],
    ['2017-03-01  9:28:30', 'is not a date and time of the form YYYY-MM-DD hh:mm:ss'],
    ['01/03/2017 09:28:30', 'is not a date and time of the form YYYY-MM-DD hh:mm:ss'],
    ['', 'is not a date and time of the form YYYY-MM-DD hh:mm:ss'],
    ['garbage', 'is not a date and time of the form YYYY-MM-DD hh:mm:ss'],
    ['2023-02-29 00:00:00', 'is not a calendar date'],
    ['1900-02-29 00:00:00', 'is not a calendar date'],
    ['2024-02-30 00:00:00', 'is not a calendar date'],
    ['2024-04-31 00:00:00', 'is not a calendar date'],
    ['2024-13-01 00:00:00', 'is not a calendar date'],
    ['2024-00-10 00:00:00', 'is not a calendar date'],
    ['2024-01-00 00:00:00', 'is not a calendar date'],
    ['0000-01-01 00:00:00', 'is not a calendar date'],
    ['2024-01-01 24:00:00', 'is not a time of day'],
    ['2024-01-01 23:60:00', 'is not a time of day'],
    ['2024-12-31 23:59:60', 'is not a time of day'],
  ])('rejects %j', (raw, why) => {
    for (const zone of ['UTC', 'Europe/Paris']) {
      const result = createDateNormalizer(zone)(raw);
      expect(result).toBeInstanceOf(RuleViolation);
      expect((result as RuleViolation).reason).toBe(`${JSON.stringify(raw)} ${why}`);
    }
  });

  it.each([
    ['Pacific/Honolulu', '9999-12-31 23:00:00'],
    ['Asia/Tokyo', '0001-01-01 00:00:00'],
  ])('%s: rejects %j, which falls outside the years 0001-9999 in UTC', (zone, raw) => {
    expect((createDateNormalizer(zone)(raw) as RuleViolation).reason).toBe(
      `${JSON.stringify(raw)} falls outside the years 0001-9999 in UTC`,
    );
  });

  it('refuses an unknown time zone once, as a configuration error naming it', () => {
    let caught: unknown;
    try {
      createDateNormalizer('Europe/Atlantis');
    } catch (error) {
      caught = error;
    }
    expect(isReconError(caught, 'CONFIG')).toBe(true);
    expect((caught as Error).message).toBe(
      'unknown time zone "Europe/Atlantis": expected an IANA zone such as UTC or Europe/Paris',
    );
  });

  it('UTC: gives back every instant of the years 0001-9999', () => {
    const toUtc = createDateNormalizer('UTC');
    fc.assert(
      fc.property(fc.integer({ min: MIN_EPOCH_MS / 1000, max: MAX_EPOCH_MS / 1000 }), (seconds) => {
        expect(toUtc(utcWallText(seconds * 1000))).toBe(utcInstantText(seconds * 1000));
      }),
      { numRuns: 2000 },
    );
  });

  it.each([
    ['Etc/GMT-3', 3 * 3600],
    ['Etc/GMT+11', -11 * 3600],
    ['+05:30', 5.5 * 3600],
    ['-03:45', -3.75 * 3600],
  ])('%s: gives back every instant written in that fixed offset', (zone, offsetSeconds) => {
    const toUtc = createDateNormalizer(zone);
    fc.assert(
      fc.property(fc.integer({ min: MIN_EPOCH_MS / 1000 + 86_400, max: MAX_EPOCH_MS / 1000 - 86_400 }), (seconds) => {
        expect(toUtc(utcWallText((seconds + offsetSeconds) * 1000))).toBe(utcInstantText(seconds * 1000));
      }),
      { numRuns: 1000 },
    );
  });

  it('Asia/Tokyo (no DST since 1951): gives back every instant of 1952-2100', () => {
    const toUtc = createDateNormalizer('Asia/Tokyo');
    const from = Date.UTC(1952, 0, 1) / 1000;
    const to = Date.UTC(2100, 0, 1) / 1000;
    fc.assert(
      fc.property(fc.integer({ min: from, max: to }), (seconds) => {
        expect(toUtc(utcWallText((seconds + 9 * 3600) * 1000))).toBe(utcInstantText(seconds * 1000));
      }),
    );
  });

  it.each(['Europe/Paris', 'America/New_York', 'Australia/Lord_Howe'])(
    '%s: keeps the wall time, except in a gap (moved forward by its length), and picks the first of a repeat',
    (zone) => {
      const toUtc = createDateNormalizer(zone);
      fc.assert(
        fc.property(wallTimeAroundDstChanges, (wall) => {
          const instant = toUtc(wall) as string;
          expect(instant).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/);
          const epochMs = new Date(instant).getTime();
          const shownWall = wallTextIn(zone, instant);
          if (shownWall !== wall) {
            const movedBySeconds = (wallEpochMs(shownWall) - wallEpochMs(wall)) / 1000;
            const gapSeconds =
              offsetSecondsAt(zone, epochMs + 86_400_000) - offsetSecondsAt(zone, epochMs - 86_400_000);
            expect(movedBySeconds).toBe(gapSeconds);
            expect(gapSeconds).toBeGreaterThan(0);
          }
          for (const earlierBy of [1800, 3600]) {
            expect(wallTextIn(zone, new Date(epochMs - earlierBy * 1000).toISOString())).not.toBe(wall);
          }
        }),
        { numRuns: 3000 },
      );
    },
  );

  it('gives the same instants when one normalizer converts many rows as when each row gets a fresh one', () => {
    fc.assert(
      fc.property(fc.array(wallTimeAroundDstChanges, { minLength: 1, maxLength: 30 }), (walls) => {
        for (const zone of ['Europe/Paris', 'Australia/Lord_Howe']) {
          const shared = createDateNormalizer(zone);
          const inOrder = walls.flatMap((wall) => [shared(wall), shared(wall)]);
          const oneByOne = walls.flatMap((wall) => [
            createDateNormalizer(zone)(wall),
            createDateNormalizer(zone)(wall),
          ]);
          expect(inOrder).toEqual(oneByOne);
        }
      }),
      { numRuns: 100 },
    );
  });
});
