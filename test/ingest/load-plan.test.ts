import { describe, expect, it } from 'vitest';
import {
  CHANGED_ROWS_FIRST_MIN_BYTES,
  CHUNK_OUTCOMES,
  CHUNK_WAYS,
  LOAD_STEPS,
  CHUNK_ROWS,
  FIRST_IDS_SAMPLE,
  MAX_CHANGED_LINES,
  nextChunkWay,
  planLoad,
  triesWholeInsert,
  type ChangedRecords,
  type ChunkOutcome,
  type ChunkWay,
  type KnownBeforeLoading,
} from '../../src/ingest/load-plan.ts';

const small: KnownBeforeLoading = { sizeBytes: CHANGED_ROWS_FIRST_MIN_BYTES - 1, mergesWhileNodeParses: true };
const large: KnownBeforeLoading = { sizeBytes: CHANGED_ROWS_FIRST_MIN_BYTES, mergesWhileNodeParses: true };
const everyRecord = { kind: 'every-record' } as const;
const mostlyStored = { sampled: 1_000, stored: 501 };
const changed: ChangedRecords = { neededLines: new Map([[0, new Set([2, 9])]]), unchangedIds: 7, records: 9 };

describe('planLoad', () => {
  const stepsSeen = new Set<string>();
  const plan = (...args: Parameters<typeof planLoad>) => {
    const step = planLoad(...args);
    stepsSeen.add(step.step);
    return step;
  };

  it('loads a small file in chunks where the database merges while Node parses, whole where it cannot', () => {
    expect(plan(small, {})).toEqual({ step: 'chunks', records: everyRecord, chunkRows: CHUNK_ROWS });
    expect(plan({ ...small, mergesWhileNodeParses: false }, {})).toEqual({
      step: 'whole-file',
      records: everyRecord,
    });
  });

  it('takes the chunk size it is given, on either database, an infinite one meaning the whole file', () => {
    expect(plan({ ...small, mergesWhileNodeParses: false, chunkRows: 7 }, {})).toEqual({
      step: 'chunks',
      records: everyRecord,
      chunkRows: 7,
    });
    expect(plan({ ...small, chunkRows: Number.POSITIVE_INFINITY }, {})).toEqual({
      step: 'whole-file',
      records: everyRecord,
    });
  });

  it('checks the first ids of a large file first', () => {
    expect(plan(large, {})).toEqual({ step: 'check-first-ids', sampleSize: FIRST_IDS_SAMPLE });
    expect(plan({ ...small, changedRowsFirstMinBytes: 0 }, {})).toEqual({
      step: 'check-first-ids',
      sampleSize: FIRST_IDS_SAMPLE,
    });
    expect(plan({ ...large, changedRowsFirstMinBytes: Number.POSITIVE_INFINITY }, {}).step).toBe('chunks');
  });

  it('loads every record of a file whose first ids are not mostly stored, or that has none', () => {
    for (const firstIds of [
      { sampled: 1_000, stored: 500 },
      { sampled: 1_000, stored: 0 },
      { sampled: 0, stored: 0 },
    ]) {
      expect(plan(large, { firstIds }), JSON.stringify(firstIds)).toEqual({
        step: 'chunks',
        records: everyRecord,
        chunkRows: CHUNK_ROWS,
      });
    }
  });

  it('looks for the changed rows first in a file whose first ids are mostly stored', () => {
    expect(plan(large, { firstIds: mostlyStored })).toEqual({
      step: 'changed-rows-first',
      maxChangedLines: MAX_CHANGED_LINES,
    });
    expect(plan(large, { firstIds: { sampled: 3, stored: 2 } }).step).toBe('changed-rows-first');
  });

  it('then loads only the changed records, every record when they are too many, or nothing', () => {
    expect(plan(large, { firstIds: mostlyStored, changedRecords: changed })).toEqual({
      step: 'chunks',
      records: { kind: 'changed-records', changed },
      chunkRows: CHUNK_ROWS,
    });
    expect(
      plan({ ...large, mergesWhileNodeParses: false }, { firstIds: mostlyStored, changedRecords: changed }),
    ).toEqual({ step: 'whole-file', records: { kind: 'changed-records', changed } });
    expect(plan(large, { firstIds: mostlyStored, changedRecords: 'too-many' })).toEqual({
      step: 'chunks',
      records: everyRecord,
      chunkRows: CHUNK_ROWS,
    });
    const none: ChangedRecords = { neededLines: new Map(), unchangedIds: 9, records: 9 };
    expect(plan(large, { firstIds: mostlyStored, changedRecords: none })).toEqual({
      step: 'nothing-changed',
      changed: none,
    });
  });

  it('has taken, in the tests above, every step the diagram of docs/architecture.md draws', () => {
    expect([...stepsSeen].sort()).toEqual([...LOAD_STEPS].sort());
  });
});

describe('nextChunkWay', () => {
  const cases: [ChunkWay, ChunkOutcome, ChunkWay][] = [
    ['staged', 'all-new', 'straight-into-table'],
    ['staged', 'some-stored', 'staged'],
    ['staged', 'stored-id-met', 'staged-after-stored-id'],
    ['straight-into-table', 'all-new', 'straight-into-table'],
    ['straight-into-table', 'some-stored', 'staged'],
    ['straight-into-table', 'stored-id-met', 'staged-after-stored-id'],
    ['staged-after-stored-id', 'all-new', 'staged-after-stored-id'],
    ['staged-after-stored-id', 'some-stored', 'staged-after-stored-id'],
    ['staged-after-stored-id', 'stored-id-met', 'staged-after-stored-id'],
  ];
  it.each(cases)('after a %s chunk that ended %s: %s', (way, outcome, next) => {
    expect(nextChunkWay(way, outcome)).toBe(next);
  });

  it('covers every way and every outcome', () => {
    expect(new Set(cases.map(([way]) => way))).toEqual(new Set(CHUNK_WAYS));
    expect(new Set(cases.map(([, outcome]) => outcome))).toEqual(new Set(CHUNK_OUTCOMES));
  });

  it('tries a staged chunk whole until an insert has met a stored id', () => {
    expect(triesWholeInsert('staged')).toBe(true);
    expect(triesWholeInsert('straight-into-table')).toBe(true);
    expect(triesWholeInsert('staged-after-stored-id')).toBe(false);
  });
});
