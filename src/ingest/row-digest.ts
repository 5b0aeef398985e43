/**
 * A 53-bit digest of the source record a transaction row was loaded from, as a decimal string for a bigint column
 * (53 bits stay exact in a JS number). Stored with every row the loader writes (migration 0011).
 *
 * The normalizer is a pure function of the record's values, the header they sit under and the zone of DATE, so
 * an equal digest says the stored row is what this record would make of it again: the loader can leave such a
 * row alone without normalizing, staging or comparing it (changed-rows-first.ts), and the merge can skip the
 * column-by-column comparison. A different digest says nothing (another header order, another spelling of the
 * same value) and the row is compared column by column. `NORMALIZER_VERSION` is part of the seed: change it when
 * the normalizer's output for a given record changes, and every stored digest stops matching.
 *
 * Two independent 32-bit multiply-xorshift lanes over the UTF-16 code units, each finished by murmur3's fmix32,
 * with a separator between values so that moving characters across a boundary changes the digest. A false
 * "unchanged" needs two different records of the same transaction id to collide on 53 bits.
 */
const NORMALIZER_VERSION = 1;
const SEPARATOR = 0x1f;

export function recordDigestSeed(header: readonly string[], timezone: string): number {
  const values = [String(NORMALIZER_VERSION), timezone, ...header];
  let h = 0x9e3779b9 | 0;
  let length = 0;
  for (let v = 0; v < values.length; v++) {
    const text = values[v]!;
    for (let i = 0; i < text.length; i++) h = step(h, text.charCodeAt(i));
    h = step(h, SEPARATOR);
    length += text.length + 1;
  }
  return finish(h, length);
}

/** Both lanes in one pass over the characters: this runs for every record of every file. */
export function recordDigest(values: readonly string[], seed: number): string {
  let high = (seed ^ 0x85ebca6b) | 0;
  let low = seed | 0;
  let length = 0;
  for (let v = 0; v < values.length; v++) {
    const text = values[v]!;
    for (let i = 0; i < text.length; i++) {
      const code = text.charCodeAt(i);
      high = step(high, code);
      low = step(low, code);
    }
    high = step(high, SEPARATOR);
    low = step(low, SEPARATOR);
    length += text.length + 1;
  }
  return String((finish(high, length) & 0x1fffff) * 4294967296 + finish(low, length));
}

function step(h: number, code: number): number {
  h = Math.imul(h ^ code, 0x5bd1e995);
  return h ^ (h >>> 13);
}

function finish(h: number, length: number): number {
  h ^= length;
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
}
