import { describe, expect, it } from 'vitest';
import { createRepeatedIdFilter } from '../../src/ingest/repeated-id-filter.ts';

describe('createRepeatedIdFilter', () => {
  it('is exact while the ids fit its set: only a repeated id is a candidate', () => {
    const filter = createRepeatedIdFilter();
    expect(['A', 'B', 'C', 'B', 'D', 'B'].map((id) => filter.add(id))).toEqual([
      false,
      false,
      false,
      true,
      false,
      true,
    ]);
    expect(filter.candidates).toEqual(['B', 'B']);
    expect(filter.overflowed).toBe(false);
  });

  it('past its set, still flags every id that repeats, with few false positives', () => {
    const filter = createRepeatedIdFilter({ exactIds: 1_000, bitsLog2: 20 });
    const repeated = new Set<string>();
    for (let n = 0; n < 50_000; n++) filter.add(`TX${n.toString().padStart(12, '0')}`);
    // Ids seen both before and after the move into the bit array are caught alike.
    for (const n of [5, 999, 1_000, 1_001, 31_337, 49_999]) {
      const id = `TX${n.toString().padStart(12, '0')}`;
      repeated.add(id);
      expect(filter.add(id)).toBe(true);
    }
    const candidates = new Set(filter.candidates);
    for (const id of repeated) expect(candidates.has(id)).toBe(true);
    // 2^20 bits for 50,000 ids: the false-positive rate is about 3e-4, so a few among 50,000.
    expect(filter.candidates.length - repeated.size).toBeLessThan(100);
  });

  it('says it overflowed once the candidates pass their limit, so the caller checks everything', () => {
    const filter = createRepeatedIdFilter({ maxCandidates: 2 });
    for (const id of ['A', 'A', 'B', 'B']) filter.add(id);
    expect(filter.overflowed).toBe(false);
    filter.add('A');
    expect(filter.overflowed).toBe(true);
    expect(filter.candidates).toEqual(['A', 'B']);
  });
});
