import { describe, expect, it } from 'vitest';
import { quoteValue } from '../../src/normalize/rule-violation.ts';

describe('quoteValue', () => {
  it('quotes a value so that a reason stays on one line', () => {
    expect(quoteValue('12,30')).toBe('"12,30"');
    expect(quoteValue('a"b\nc;d')).toBe('"a\\"b\\nc;d"');
  });

  it('cuts a long value and says how long it was', () => {
    expect(quoteValue('x'.repeat(41))).toBe(`"${'x'.repeat(40)}"... (41 characters)`);
    expect(quoteValue('x'.repeat(40))).toBe(`"${'x'.repeat(40)}"`);
  });
});
