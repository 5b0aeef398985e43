/**
 * A small deterministic random source (mulberry32): the same seed draws the same sequence on every machine
 * and Node version, which Math.random cannot promise. Not for secrets.
 */
export interface SeededRandom {
  /** A float in [0, 1). */
  next(): number;
  /** An integer in [min, max], both included. */
  int(min: number, max: number): number;
  /** A bigint in [min, max], both included; the span must stay below 2^53. */
  bigint(min: bigint, max: bigint): bigint;
  pick<T>(items: readonly T[]): T;
  chance(probability: number): boolean;
}

export function createSeededRandom(seed: number): SeededRandom {
  if (!Number.isInteger(seed)) throw new RangeError(`a scenario seed is an integer (got ${seed})`);
  let state = seed >>> 0;
  function next(): number {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }
  const int = (min: number, max: number) => min + Math.floor(next() * (max - min + 1));
  return {
    next,
    int,
    bigint: (min, max) => min + BigInt(int(0, Number(max - min))),
    pick: (items) => {
      if (items.length === 0) throw new RangeError('cannot pick from an empty list');
      return items[int(0, items.length - 1)]!;
    },
    chance: (probability) => next() < probability,
  };
}
