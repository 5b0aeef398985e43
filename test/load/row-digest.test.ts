import { describe, expect, it } from 'vitest';
import { digestSeed, rowDigest } from '../../src/load/row-digest.ts';

describe('rowDigest', () => {
  const seed = digestSeed('transaction_id,order_id|false');

  it('is a non-negative integer of at most 53 bits, as decimal digits, the same for the same text', () => {
    const digest = rowDigest('0\t2\tT1\tORDER-1', 3, seed);
    expect(digest).toMatch(/^\d+$/);
    expect(Number(digest)).toBeLessThanOrEqual(Number.MAX_SAFE_INTEGER);
    expect(rowDigest('0\t2\tT1\tORDER-1', 3, seed)).toBe(digest);
  });

  it('reads the text from `start` on: the entry index and line before it do not count', () => {
    expect(rowDigest('0\t2\tT1\tORDER-1', 3, seed)).toBe(rowDigest('3\t9876\tT1\tORDER-1', 6, seed));
  });

  it('differs for another value, another set of columns, or the same characters split otherwise', () => {
    const digest = rowDigest('\tT1\tORDER-1', 0, seed);
    expect(rowDigest('\tT1\tORDER-2', 0, seed)).not.toBe(digest);
    expect(rowDigest('\tT1\tORDER-1', 0, digestSeed('transaction_id,order_id|true'))).not.toBe(digest);
    expect(rowDigest('\tT1O\tRDER-1', 0, seed)).not.toBe(digest);
  });

  it('spreads a million similar rows without a collision', () => {
    const seen = new Set<string>();
    for (let i = 0; i < 1_000_000; i++) seen.add(rowDigest(`\tTX${String(i).padStart(12, '0')}\t${i % 1000}`, 0, seed));
    expect(seen.size).toBe(1_000_000);
  });
});
