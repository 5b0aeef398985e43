import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { normalizePosition } from '../../src/normalize/position.ts';
import { RuleViolation } from '../../src/normalize/rule-violation.ts';

describe('normalizePosition (SCHEDULE, RETRY)', () => {
  it.each([
    ['[1-3]', 1, 3],
    ['[3-3]', 3, 3],
    ['[1-1]', 1, 1],
    ['[12-24]', 12, 24],
    ['[01-03]', 1, 3],
    [' [2-4] ', 2, 4],
    ['[32767-32767]', 32767, 32767],
  ])('reads %j as position %i of %i', (raw, index, count) => {
    expect(normalizePosition(raw)).toEqual({ index, count });
  });

  it.each([
    ['', 'is not a position of the form [n-m]'],
    ['1-3', 'is not a position of the form [n-m]'],
    ['[1-3', 'is not a position of the form [n-m]'],
    ['1-3]', 'is not a position of the form [n-m]'],
    ['[1 - 3]', 'is not a position of the form [n-m]'],
    ['[-3]', 'is not a position of the form [n-m]'],
    ['[1-]', 'is not a position of the form [n-m]'],
    ['[1/3]', 'is not a position of the form [n-m]'],
    ['[+1-3]', 'is not a position of the form [n-m]'],
    ['[1-3-5]', 'is not a position of the form [n-m]'],
    ['[a-b]', 'is not a position of the form [n-m]'],
    ['[1-3]x', 'is not a position of the form [n-m]'],
    ['[0-3]', 'is not a position n of m with 1 <= n <= m'],
    ['[4-3]', 'is not a position n of m with 1 <= n <= m'],
    ['[0-0]', 'is not a position n of m with 1 <= n <= m'],
    ['[1-32768]', 'has a position above 32767'],
    ['[99999999999999999999-1]', 'has a position above 32767'],
  ])('rejects %j', (raw, why) => {
    const result = normalizePosition(raw);
    expect(result).toBeInstanceOf(RuleViolation);
    expect((result as RuleViolation).reason).toBe(`${JSON.stringify(raw)} ${why}`);
  });

  it('reads back every position it is given in the export format', () => {
    const position = fc
      .integer({ min: 1, max: 32767 })
      .chain((count) => fc.record({ index: fc.integer({ min: 1, max: count }), count: fc.constant(count) }));
    fc.assert(
      fc.property(position, ({ index, count }) => {
        expect(normalizePosition(`[${index}-${count}]`)).toEqual({ index, count });
      }),
    );
  });
});
