/**
 * A 53-bit digest of a staged row's COPY text, as a decimal string for a bigint column (53 bits stay exact in a JS
 * number). The merge compares it with the digest stored by the row's last write and skips the column-by-column
 * comparison when they are equal (migration 0011). The text is the row's normalized values already escaped for COPY,
 * so equal text means equal values; `seed` stands for the set of columns the file carried, so a narrower file never
 * matches a wider one's digest.
 *
 * Two independent 32-bit multiply-xorshift lanes over the UTF-16 code units, each finished by murmur3's fmix32:
 * about a nanosecond a character, off the critical path of nothing (the loader already built the text). A false
 * "unchanged" needs two different contents of the same transaction id to collide on 53 bits.
 */
export function digestSeed(signature: string): number {
  return lane(signature, 0, 0x9e3779b9);
}

export function rowDigest(text: string, start: number, seed: number): string {
  const high = lane(text, start, seed ^ 0x85ebca6b) & 0x1fffff;
  const low = lane(text, start, seed);
  return String(high * 4294967296 + low);
}

function lane(text: string, start: number, seed: number): number {
  let h = seed | 0;
  for (let i = start; i < text.length; i++) {
    h = Math.imul(h ^ text.charCodeAt(i), 0x5bd1e995);
    h ^= h >>> 13;
  }
  h ^= text.length - start;
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
}
