import { describe, expect, it } from 'vitest';
import { normalizeMinorUnits } from '../../src/normalize/minor-units.ts';
import { RuleViolation } from '../../src/normalize/rule-violation.ts';

describe('normalizeMinorUnits', () => {
  it.each([
    ['12390', 12390n],
    ['0', 0n],
    ['-0', 0n],
    ['-1250', -1250n],
    [' 42 ', 42n],
    ['000123', 123n],
    // Beyond 2^53, where a JS number would round: exact.
    ['9007199254740993', 9007199254740993n],
    ['9223372036854775807', 9223372036854775807n],
    ['-9223372036854775808', -9223372036854775808n],
    ['0000000000000000000000001', 1n],
  ])('reads %j as %s', (raw, expected) => {
    expect(normalizeMinorUnits(raw)).toBe(expected);
  });

  it.each([
    ['123.90', /is not a whole number of minor units/],
    ['123.00', /is not a whole number of minor units/],
    ['1e3', /is not a whole number of minor units/],
    ['+12', /is not a whole number of minor units/],
    ['12 34', /is not a whole number of minor units/],
    ['-', /is not a whole number of minor units/],
    ['', /is not a whole number of minor units/],
    ['0x10', /is not a whole number of minor units/],
    ['9223372036854775808', /beyond the range of a bigint/],
    ['-9223372036854775809', /beyond the range of a bigint/],
    ['123456789012345678901', /beyond the range of a bigint/],
  ])('rejects %j', (raw, reason) => {
    const result = normalizeMinorUnits(raw);
    expect(result).toBeInstanceOf(RuleViolation);
    expect((result as RuleViolation).reason).toMatch(reason);
    expect((result as RuleViolation).reason).toContain(JSON.stringify(raw));
  });
});
