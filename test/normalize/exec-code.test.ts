import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { normalizeExecCode } from '../../src/normalize/exec-code.ts';
import { RuleViolation } from '../../src/normalize/rule-violation.ts';

describe('normalizeExecCode', () => {
  it.each([
    ['0', '0000'],
    ['2', '0002'],
    ['15', '0015'],
    ['401', '0401'],
    ['4001', '4001'],
    ['0000', '0000'],
    // Surrounding spaces and tabs are tolerated: they cannot change which code is meant.
    [' 2', '0002'],
    ['4001 ', '4001'],
    ['\t0\t', '0000'],
  ])('pads %j to %j', (raw, expected) => {
    expect(normalizeExecCode(raw)).toBe(expected);
  });

  it.each(['', ' ', '40011', '00000', '-1', '+1', '1a', 'x', '4 001', '1.0', '١٢', '0x1'])('rejects %j', (raw) => {
    const result = normalizeExecCode(raw);
    expect(result).toBeInstanceOf(RuleViolation);
    expect((result as RuleViolation).reason).toBe(`${JSON.stringify(raw)} is not an execution code of 1 to 4 digits`);
  });

  it('pads any 1-4 digit string to 4 digits and keeps its value', () => {
    fc.assert(
      fc.property(fc.stringMatching(/^[0-9]{1,4}$/), (digits) => {
        const code = normalizeExecCode(digits);
        expect(code).toMatch(/^[0-9]{4}$/);
        expect(Number(code)).toBe(Number(digits));
        expect((code as string).endsWith(digits)).toBe(true);
      }),
    );
  });

  it('rejects every value that is not 1-4 digits once trimmed', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 8 }), (raw) => {
        fc.pre(!/^[ \t]*[0-9]{1,4}[ \t]*$/.test(raw));
        expect(normalizeExecCode(raw)).toBeInstanceOf(RuleViolation);
      }),
    );
  });
});
