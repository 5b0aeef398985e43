/**
 * A 53-bit digest of the source record a transaction row was loaded from, as a decimal string for a bigint column
 * (53 bits stay exact in a JS number). Stored with every row the loader writes (migration 0011).
 *
 * The normalizer is a pure function of the record's values, the header they sit under and the zone of DATE, so
 * an equal digest says the stored row is what this record would make of it again: the loader can leave such a
 * row alone without normalizing, staging or comparing it (`fingerprint-pass.ts`), and the merge can skip the
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
  return lane([String(NORMALIZER_VERSION), timezone, ...header], 0x9e3779b9);
}

export function recordDigest(values: readonly string[], seed: number): string {
  const high = lane(values, seed ^ 0x85ebca6b) & 0x1fffff;
  const low = lane(values, seed);
  return String(high * 4294967296 + low);
}

function lane(values: readonly string[], seed: number): number {
  let h = seed | 0;
  let length = 0;
  for (let v = 0; v < values.length; v++) {
    const text = values[v]!;
    for (let i = 0; i < text.length; i++) {
      h = Math.imul(h ^ text.charCodeAt(i), 0x5bd1e995);
      h ^= h >>> 13;
    }
    h = Math.imul(h ^ SEPARATOR, 0x5bd1e995);
    h ^= h >>> 13;
    length += text.length + 1;
  }
  h ^= length;
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
}
