import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { normalizeIsoInstant } from '../../src/normalize/iso-instant.ts';
import { RuleViolation } from '../../src/normalize/rule-violation.ts';

function reasonOf(result: string | RuleViolation): string {
  expect(result).toBeInstanceOf(RuleViolation);
  return (result as RuleViolation).reason;
}

describe('normalizeIsoInstant', () => {
  it.each([
    ['2024-05-01T12:00:00Z', '2024-05-01T12:00:00Z'],
    ['2024-05-01T12:00:00+02:00', '2024-05-01T10:00:00Z'],
    ['2024-05-01T01:30:00+02:00', '2024-04-30T23:30:00Z'],
    ['2024-05-01T23:30:00-05:00', '2024-05-02T04:30:00Z'],
    ['2024-05-01T12:00:00+0530', '2024-05-01T06:30:00Z'],
    ['2024-05-01T12:00:00+02', '2024-05-01T10:00:00Z'],
    ['2024-05-01T12:00:00-00:00', '2024-05-01T12:00:00Z'],
    // A space for the T: PostgreSQL's own text form, in UTC as sync-orders' session writes it.
    ['2024-05-01 10:00:00.123456+00', '2024-05-01T10:00:00.123456Z'],
    ['2024-05-01 12:00:00Z', '2024-05-01T12:00:00Z'],
    ['2024-05-01t12:00:00z', '2024-05-01T12:00:00Z'],
    ['2024-05-01T12:00Z', '2024-05-01T12:00:00Z'],
    ['2024-05-01T12:00:00.5+01:00', '2024-05-01T11:00:00.5Z'],
    ['2024-05-01T12:00:00.123456000Z', '2024-05-01T12:00:00.123456Z'],
    ['  2024-05-01T12:00:00Z  ', '2024-05-01T12:00:00Z'],
    ['2024-02-29T00:00:00+01:00', '2024-02-28T23:00:00Z'],
    ['2024-12-31T23:59:59-01:00', '2025-01-01T00:59:59Z'],
    ['0001-01-01T00:00:00Z', '0001-01-01T00:00:00Z'],
    ['9999-12-31T23:59:59Z', '9999-12-31T23:59:59Z'],
  ])('reads %j as %s', (raw, expected) => {
    expect(normalizeIsoInstant(raw)).toBe(expected);
  });

  it.each([
    ['2024-05-01T12:00:00', /has no UTC offset/],
    ['2024-05-01 12:00:00', /has no UTC offset/],
    ['2024-05-01', /is not an ISO 8601 date and time/],
    ['20240501T120000Z', /is not an ISO 8601 date and time/],
    ['2024-05-01T12Z', /is not an ISO 8601 date and time/],
    ['2024-5-1T12:00:00Z', /is not an ISO 8601 date and time/],
    ['2024-05-01T12:00:00.Z', /is not an ISO 8601 date and time/],
    ['2024-05-01T12:00:00,5Z', /is not an ISO 8601 date and time/],
    ['2024-05-01T12:00:00 Z', /is not an ISO 8601 date and time/],
    ['2024-05-01T12:00:00+2', /is not an ISO 8601 date and time/],
    ['2024-05-01T12:00:00Europe/Paris', /is not an ISO 8601 date and time/],
    ['01/05/2024 12:00', /is not an ISO 8601 date and time/],
    ['', /is not an ISO 8601 date and time/],
    ['2023-02-29T12:00:00Z', /is not a calendar date/],
    ['2024-04-31T12:00:00Z', /is not a calendar date/],
    ['2024-13-01T12:00:00Z', /is not a calendar date/],
    ['0000-01-01T12:00:00Z', /is not a calendar date/],
    ['2024-05-01T24:00:00Z', /is not a time of day/],
    ['2024-05-01T12:60:00Z', /is not a time of day/],
    ['2024-06-30T23:59:60Z', /is not a time of day/],
    ['2024-05-01T12:00:00+24:00', /has an offset that is not a time of day/],
    ['2024-05-01T12:00:00+02:60', /has an offset that is not a time of day/],
    ['2024-05-01T12:00:00.1234567Z', /more precise than a microsecond/],
    ['0001-01-01T00:30:00+01:00', /outside the years 0001-9999/],
    ['9999-12-31T23:30:00-01:00', /outside the years 0001-9999/],
  ])('rejects %j', (raw, reason) => {
    const text = reasonOf(normalizeIsoInstant(raw));
    expect(text).toMatch(reason);
    expect(text).toContain(JSON.stringify(raw));
  });

  it('agrees with Date on every instant of 1900-2100 written with any whole-minute offset', () => {
    const instant = fc
      .integer({ min: Date.UTC(1900, 0, 1) / 1000, max: Date.UTC(2100, 0, 1) / 1000 })
      .map((s) => s * 1000);
    const offsetMinutes = fc.integer({ min: -23 * 60 - 59, max: 23 * 60 + 59 });
    fc.assert(
      fc.property(instant, offsetMinutes, fc.constantFrom('T', ' '), (epochMs, offset, separator) => {
        const wall = new Date(epochMs + offset * 60_000).toISOString();
        const sign = offset < 0 ? '-' : '+';
        const magnitude = Math.abs(offset);
        const written = `${wall.slice(0, 10)}${separator}${wall.slice(11, 19)}${sign}${String(Math.floor(magnitude / 60)).padStart(2, '0')}:${String(magnitude % 60).padStart(2, '0')}`;
        expect(normalizeIsoInstant(written)).toBe(`${new Date(epochMs).toISOString().slice(0, 19)}Z`);
      }),
    );
  });
});
