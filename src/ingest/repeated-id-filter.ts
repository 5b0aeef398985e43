/**
 * Which transaction ids of a file may occur more than once, learnt while its rows stream by, in fixed memory.
 *
 * The merge joins the staged rows to recon.transactions directly when no id is staged twice, and has to sort
 * them to keep the last of each id otherwise; asking the database which case it is costs a pass over a million
 * rows. A Bloom filter answers from the rows as they are encoded: an id whose bits were all set already is a
 * candidate. Every id that does repeat becomes one (its second occurrence finds its own bits), and a few that do
 * not (false positives), so the merge checks the candidates alone against the staged rows.
 *
 * The first `EXACT_IDS` ids are kept in a Set, exact and small, which is all a backfill or a small export needs;
 * past that they move into the filter. 2^27 bits (16 MiB) and 4 probes keep false positives to well under one
 * at a million rows and a few hundred at five million. Past `maxCandidates` the list stops growing and
 * `overflowed` says the whole file must be checked instead.
 */
const EXACT_IDS = 50_000;
const BITS_LOG2 = 27;
const PROBES = 4;
const MAX_CANDIDATES = 100_000;

export interface RepeatedIdFilter {
  /** Notes an id; true when it may have been seen before. */
  add(id: string): boolean;
  /** Ids that may repeat, each listed once per time it was flagged, up to `maxCandidates`. */
  readonly candidates: readonly string[];
  readonly overflowed: boolean;
}

export function createRepeatedIdFilter({
  exactIds = EXACT_IDS,
  bitsLog2 = BITS_LOG2,
  maxCandidates = MAX_CANDIDATES,
} = {}): RepeatedIdFilter {
  let exact: Set<string> | undefined = new Set();
  let bits: Uint32Array | undefined;
  const mask = 2 ** bitsLog2 - 1;
  const candidates: string[] = [];
  let overflowed = false;

  const flag = (id: string) => {
    // A copy: an id split out of the csv text may be a slice that keeps its whole decoded chunk of the file alive.
    if (candidates.length < maxCandidates) candidates.push(Buffer.from(id).toString());
    else overflowed = true;
  };
  const setBits = (id: string): boolean => {
    // Two independent 32-bit hashes, combined as h1 + i * h2 for the probes (Kirsch-Mitzenmacher).
    let h1 = 0x811c9dc5;
    let h2 = 0x9747b28c;
    for (let i = 0; i < id.length; i++) {
      const code = id.charCodeAt(i);
      h1 = Math.imul(h1 ^ code, 0x01000193);
      h2 = Math.imul(h2 ^ code, 0x5bd1e995);
      h2 ^= h2 >>> 15;
    }
    h2 |= 1;
    let seen = true;
    for (let probe = 0; probe < PROBES; probe++) {
      const bit = (h1 + Math.imul(probe, h2)) & mask;
      const word = bit >>> 5;
      const bitFlag = 1 << (bit & 31);
      if ((bits![word]! & bitFlag) === 0) {
        seen = false;
        bits![word] = bits![word]! | bitFlag;
      }
    }
    return seen;
  };

  return {
    add(id) {
      let seen: boolean;
      if (exact) {
        seen = exact.has(id);
        exact.add(id);
        if (exact.size > exactIds) {
          bits = new Uint32Array(2 ** (bitsLog2 - 5));
          for (const known of exact) setBits(known);
          exact = undefined;
        }
      } else {
        seen = setBits(id);
      }
      if (seen) flag(id);
      return seen;
    },
    get candidates() {
      return candidates;
    },
    get overflowed() {
      return overflowed;
    },
  };
}
