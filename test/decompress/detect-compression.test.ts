import { describe, expect, it } from 'vitest';
import { detectCompression } from '../../src/decompress/detect-compression.ts';

describe('detectCompression', () => {
  it.each([
    ['zip local header', [0x50, 0x4b, 0x03, 0x04], 'zip'],
    ['empty zip (end record only)', [0x50, 0x4b, 0x05, 0x06], 'zip'],
    ['gzip', [0x1f, 0x8b, 0x08, 0x00], 'gzip'],
    ['bzip2', [0x42, 0x5a, 0x68, 0x39], 'bzip2'],
    ['csv text', [...Buffer.from('IDEN')], 'none'],
    ['BOM', [0xef, 0xbb, 0xbf, 0x49], 'none'],
    ['PK but no zip record', [0x50, 0x4b, 0x07, 0x08], 'none'],
    ['BZ without h', [0x42, 0x5a, 0x30, 0x39], 'none'],
    ['one byte', [0x1f], 'none'],
    ['nothing', [], 'none'],
  ])('%s', (_name, bytes, expected) => {
    expect(detectCompression(Buffer.from(bytes))).toBe(expected);
  });
});
