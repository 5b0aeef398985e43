import { describe, expect, it } from 'vitest';
import { copyValue, escapeCopyText, NulCharacterError } from '../../src/ingest/copy-text.ts';

describe('escapeCopyText', () => {
  it.each([
    ['plain', 'plain'],
    ['', ''],
    ['a\\b', 'a\\\\b'],
    ['a\tb', 'a\\tb'],
    ['line1\nline2', 'line1\\nline2'],
    ['crlf\r\n', 'crlf\\r\\n'],
    ['\\N', '\\\\N'],
    ['\\.', '\\\\.'],
    ['\t\t', '\\t\\t'],
    ['tail\\', 'tail\\\\'],
    ['été ünïcödé 💶', 'été ünïcödé 💶'],
    ['"quoted; value"', '"quoted; value"'],
    ['bell\u0007 and DEL\u007f stay', 'bell\u0007 and DEL\u007f stay'],
  ])('%j -> %j', (value, expected) => {
    expect(escapeCopyText(value)).toBe(expected);
  });

  it('refuses a NUL character, which PostgreSQL text cannot hold', () => {
    expect(() => escapeCopyText('a\u0000b')).toThrow(NulCharacterError);
    expect(() => escapeCopyText('x\\y\u0000')).toThrow(NulCharacterError);
  });
});

describe('copyValue', () => {
  it('writes null as \\N, integers and bigints as digits, text escaped', () => {
    expect(copyValue(null)).toBe('\\N');
    expect(copyValue(12390n)).toBe('12390');
    expect(copyValue(-5n)).toBe('-5');
    expect(copyValue(9007199254740993n)).toBe('9007199254740993');
    expect(copyValue(3)).toBe('3');
    expect(copyValue('a\tb')).toBe('a\\tb');
  });
});
