import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Connection } from '../../src/db/database.ts';
import {
  beginFingerprints,
  classifyFingerprints,
  FINGERPRINT_COPY_SQL,
  fingerprintLine,
  fingerprintsRepeatIds,
} from '../../src/ingest/fingerprints.ts';
import { createRepeatedIdFilter } from '../../src/ingest/repeated-id-filter.ts';
import { BACKENDS, createTestDatabase, hasPostgres, type TestDatabase } from '../support/test-database.ts';

/** Stored rows T1..T4 with digests 1..4; the transaction is rolled back after `work`, so each test starts from them. */
const STORED = ['T1', 'T2', 'T3', 'T4'];

describe.each(BACKENDS)('fingerprints of a file against the stored rows, on %s', (backend) => {
  const skip = backend === 'postgres' && !hasPostgres;
  let testDb: TestDatabase;

  beforeAll(async () => {
    if (skip) return;
    testDb = await createTestDatabase(backend);
    const file = await testDb.database.db
      .insertInto('recon.files')
      .values({
        name: 'stored.csv',
        sha256: 'f'.repeat(64),
        size_bytes: 1,
        compression: 'none',
        status: 'loaded',
        arrival: 'ingest',
      })
      .returning('file_id')
      .executeTakeFirstOrThrow();
    await testDb.database.db
      .insertInto('recon.transactions')
      .values(
        STORED.map((id, i) => ({
          transaction_id: id,
          row_digest: String(i + 1),
          extra: '{}',
          file_id: file.file_id,
          line: i + 2,
        })),
      )
      .execute();
  });
  afterAll(async () => {
    await testDb?.drop();
  });

  /** Fingerprints of one entry, [id, digest] by line from 2, in a transaction that is rolled back. */
  async function withFingerprints<T>(
    records: [string, string][],
    work: (connection: Connection) => Promise<T>,
  ): Promise<T> {
    let result: T | undefined;
    await testDb.database
      .transaction(async (connection) => {
        await beginFingerprints(connection);
        await connection.copyFrom(
          FINGERPRINT_COPY_SQL,
          Readable.from([records.map(([id, digest], i) => fingerprintLine(0, i + 2, id, digest)).join('')]),
        );
        result = await work(connection);
        throw new RolledBack();
      })
      .catch((error: unknown) => {
        if (!(error instanceof RolledBack)) throw error;
      });
    return result as T;
  }

  /** A filter of 32 bits, past its exact set at once: after a dozen ids nearly every new one is a false positive. */
  const tinyFilter = (maxCandidates?: number) => createRepeatedIdFilter({ exactIds: 0, bitsLog2: 5, maxCandidates });
  const distinctRecords = Array.from({ length: 40 }, (_, i): [string, string] => [`T${i + 1}`, String(i + 1)]);

  it.skipIf(skip)("tells the filter's false positives from ids that do repeat", async () => {
    const ids = tinyFilter();
    for (const [id] of distinctRecords) ids.add(id);
    expect(ids.candidates.length).toBeGreaterThan(0);
    expect(await withFingerprints(distinctRecords, (c) => fingerprintsRepeatIds(c, ids))).toBe(false);

    const repeating: [string, string][] = [...distinctRecords, ['T7', '70']];
    const idsAgain = tinyFilter();
    for (const [id] of repeating) idsAgain.add(id);
    expect(await withFingerprints(repeating, (c) => fingerprintsRepeatIds(c, idsAgain))).toBe(true);
  });

  it.skipIf(skip)('takes an overflowed filter, or none flagged, at its word', async () => {
    const overflowed = tinyFilter(1);
    for (const [id] of distinctRecords) overflowed.add(id);
    expect(overflowed.overflowed).toBe(true);
    expect(await withFingerprints(distinctRecords, (c) => fingerprintsRepeatIds(c, overflowed))).toBe(true);
    const exact = createRepeatedIdFilter();
    for (const [id] of distinctRecords) exact.add(id);
    expect(await withFingerprints(distinctRecords, (c) => fingerprintsRepeatIds(c, exact))).toBe(false);
  });

  it.skipIf(skip)(
    'finds the same lines to load whether or not it allows for repeated ids, when none repeats',
    async () => {
      // T2 changed, T5 new, T1, T3 and T4 as stored.
      const records: [string, string][] = [
        ['T1', '1'],
        ['T2', '9'],
        ['T3', '3'],
        ['T5', '5'],
        ['T4', '4'],
      ];
      const options = { fingerprinted: records.length, maxNeededLines: 10 };
      const expected = { neededLines: new Map([[0, new Set([3, 5])]]), unchangedIds: 3 };
      expect(
        await withFingerprints(records, (c) => classifyFingerprints(c, { ...options, repeatedIds: false })),
      ).toEqual(expected);
      expect(
        await withFingerprints(records, (c) => classifyFingerprints(c, { ...options, repeatedIds: true })),
      ).toEqual(expected);
    },
  );

  it.skipIf(skip)('keeps every line of an id whose last record changes it, when ids repeat', async () => {
    // T1 changed then back as stored: unchanged. T3 as stored then changed: both its lines load.
    const records: [string, string][] = [
      ['T1', '8'],
      ['T1', '1'],
      ['T3', '3'],
      ['T3', '6'],
    ];
    const verdict = await withFingerprints(records, (c) =>
      classifyFingerprints(c, { fingerprinted: records.length, repeatedIds: true, maxNeededLines: 10 }),
    );
    expect(verdict).toEqual({ neededLines: new Map([[0, new Set([4, 5])]]), unchangedIds: 1 });
  });

  it.skipIf(skip)('gives up, for the whole file to load, past the most lines it would list', async () => {
    const records: [string, string][] = [
      ['T6', '6'],
      ['T7', '7'],
      ['T8', '8'],
    ];
    expect(
      await withFingerprints(records, (c) =>
        classifyFingerprints(c, { fingerprinted: 3, repeatedIds: false, maxNeededLines: 2 }),
      ),
    ).toBeNull();
  });
});

class RolledBack extends Error {}
