import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ingestFiles } from '../../pipelines/ingest-files.ts';
import { loadConfig } from '../../src/config/config.ts';
import type { Database } from '../../src/db/database.ts';
import type { FileResult } from '../../src/ingest/file-result.ts';
import { zipArchive } from '../../scripts/zip-archive.ts';
import { BACKENDS, createTestDatabase, hasPostgres, type TestDatabase } from '../support/test-database.ts';

const limits = loadConfig({}).limits;
const HEADER = 'TRANSACTIONID;ORDERID;DATE;AMOUNT;CURRENCY;EXECCODE';
const record = (n: number, amount = `${n}.05`) => `T${n};O${n >> 1};2024-05-01 12:00:00;${amount};EUR;${n % 3}`;
const csv = (lines: string[]) => Buffer.from([HEADER, ...lines].join('\n') + '\n');

/**
 * A file loaded in `chunks` (load-plan.ts, `chunkRows`) must end as the same file loaded whole: rows, lineage to the
 * last line, counts and rejected rows. Chunks of 7 rows here put each case across a chunk boundary.
 */
function files(): Record<string, Buffer> {
  const first = Array.from({ length: 40 }, (_, i) => record(i + 1));
  // A new id again 20 lines later, as it was (T3) and changed (T4); twice in one chunk (T11); then a rejected
  // record (T12: the accepted one stays); and a few rejected records spread over the chunks.
  first.splice(22, 0, record(3), record(4, '44.44'), record(11, '11.11'), record(12, 'not money'));
  first.splice(9, 0, record(11, '11.00'), record(900, 'bad'));
  first.push(record(901, 'bad'));
  // Stored ids: changed in one chunk and back in a later one (T5: unchanged, lineage kept), as stored then changed
  // (T6), changed only (T7), changed twice (T8: the last wins); among new ids, which follow in other chunks.
  const mixed = [
    record(5, '55.55'),
    record(6),
    record(7, '77.77'),
    record(8, '8.01'),
    ...Array.from({ length: 20 }, (_, i) => record(100 + i)),
    record(5),
    record(6, '66.66'),
    record(8, '8.02'),
    record(3),
    ...Array.from({ length: 10 }, (_, i) => record(200 + i)),
  ];
  // 3,000 rows in chunks of 1,200 (see the test): the second chunk is new for its first 1,000 rows, what its sample
  // reads, and then meets a stored id (T9, changed), which fails its insert and sends it the careful way.
  const large = Array.from({ length: 3_000 }, (_, i) => (i === 2_300 ? record(9, '9.99') : record(1_000 + i)));
  // Entries of one zip, the second without EXECCODE and in another order (a merge each), with ids in both, new
  // and stored: T20 changed by the first and back by the second.
  const reordered = (line: string) => {
    const [id, order, date, amount, currency] = line.split(';');
    return [order, id, date, amount, currency].join(';');
  };
  const zip = zipArchive([
    {
      name: 'a.csv',
      data: csv([record(20, '20.20'), ...Array.from({ length: 12 }, (_, i) => record(300 + i)), record(301, '3.01')]),
    },
    {
      name: 'b.csv',
      data: Buffer.from(
        [
          'ORDERID;TRANSACTIONID;DATE;AMOUNT;CURRENCY',
          ...[record(305, '3.05'), record(21), ...Array.from({ length: 9 }, (_, i) => record(400 + i)), record(20)].map(
            reordered,
          ),
        ].join('\n'),
      ),
    },
  ]);
  // Chunks of 5 going straight into recon.transactions from the third on (see the test): the third holds a rejected
  // record, the fourth a stored id (T10, changed), which fails its COPY and sends its rows through staging.
  const straight = [
    ...Array.from({ length: 10 }, (_, i) => record(500 + i)),
    record(510),
    record(511, 'bad'),
    record(512),
    record(513),
    record(514),
    record(515),
    record(10, '10.10'),
    record(516, 'bad'),
    record(517),
    record(518),
    ...Array.from({ length: 7 }, (_, i) => record(519 + i)),
  ];
  return {
    'first.csv': csv(first),
    'mixed.csv': csv(mixed),
    'large.csv': csv(large),
    'two-headers.zip': zip,
    'straight.csv': csv(straight),
  };
}

describe.each(BACKENDS)('loading a file in chunks, on %s', (backend) => {
  const skip = backend === 'postgres' && !hasPostgres;
  let chunked: TestDatabase;
  let whole: TestDatabase;
  let dir: string;
  let paths: Record<string, string>;

  beforeAll(async () => {
    if (skip) return;
    [chunked, whole] = await Promise.all([createTestDatabase(backend), createTestDatabase(backend)]);
    dir = await mkdtemp(path.join(os.tmpdir(), 'recon-chunked-'));
    paths = {};
    for (const [name, data] of Object.entries(files())) {
      paths[name] = path.join(dir, name);
      await writeFile(paths[name], data);
    }
  });
  afterAll(async () => {
    await Promise.all([chunked?.drop(), whole?.drop()]);
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  // A read-ahead of one byte keeps the parser one piece of COPY text ahead, so that a chunk proven new sends the ones
  // after the next straight into recon.transactions, as on a large file.
  const ingest = (database: Database, name: string, chunkRows: number) =>
    ingestFiles(database, [paths[name]!], {
      timezone: 'UTC',
      limits,
      chunkRows,
      readAheadBytes: 1,
      changedRowsFirstMinBytes: Number.POSITIVE_INFINITY,
    });
  const tables = async (database: Database) => {
    const files = new Map(
      (await database.db.selectFrom('recon.files').select(['file_id', 'name']).execute()).map((f) => [
        f.file_id,
        f.name,
      ]),
    );
    const transactions = await database.db
      .selectFrom('recon.transactions')
      .selectAll()
      .orderBy('transaction_id')
      .execute();
    const rejected = await database.db
      .selectFrom('recon.rejected_rows')
      .select(['file_id', 'entry', 'line', 'raw', 'reason'])
      .orderBy('file_id')
      .orderBy('entry')
      .orderBy('line')
      .execute();
    return {
      // updated_at is the load's own instant; the file ids are named, as the two databases number them alike only by chance.
      transactions: transactions.map(({ updated_at: _updatedAt, file_id, ...row }) => ({
        ...row,
        file: files.get(file_id),
      })),
      rejected: rejected.map(({ file_id, ...row }) => ({ ...row, file: files.get(file_id) })),
    };
  };
  const counts = (results: FileResult[]) => results.map(({ fileId: _fileId, ...result }) => result);

  it.skipIf(skip)('ends each file with the rows, lineage, counts and rejected rows of loading it whole', async () => {
    const results: Record<string, FileResult[]> = {};
    for (const [name, chunkRows] of [
      ['first.csv', 7],
      ['mixed.csv', 7],
      ['large.csv', 1_200],
      ['two-headers.zip', 7],
      ['straight.csv', 5],
    ] as const) {
      const [inChunks, asWhole] = [
        await ingest(chunked.database, name, chunkRows),
        await ingest(whole.database, name, Number.POSITIVE_INFINITY),
      ];
      // A whole file counts an id once per run of entries with the same columns (staged-file.ts, groupByShape); in
      // chunks, an id that an earlier chunk inserted is counted there once. Files of one header count alike.
      if (name !== 'two-headers.zip') expect(counts(inChunks), name).toEqual(counts(asWhole));
      results[name] = inChunks;
    }
    const [mine, theirs] = [await tables(chunked.database), await tables(whole.database)];
    expect(mine.transactions).toEqual(theirs.transactions);
    expect(mine.rejected).toEqual(theirs.rejected);

    // What loading whole means, checked once here so that equal is also right.
    expect(results['first.csv']![0]).toMatchObject({
      status: 'loaded',
      rows: 47,
      inserted: 40,
      rejected: 3,
      superseded: 4,
    });
    expect(results['mixed.csv']![0]).toMatchObject({ inserted: 30, updated: 3, unchanged: 2, superseded: 3 });
    expect(results['large.csv']![0]).toMatchObject({ inserted: 2_999, updated: 1, unchanged: 0 });
    // 23 distinct ids in 26 rows: 21 new, T21 as stored, and T20, changed by a.csv and back by b.csv, counted once.
    expect(results['two-headers.zip']![0]).toMatchObject({
      rows: 26,
      inserted: 21,
      superseded: 3,
      updated: 1,
      unchanged: 1,
    });
    expect(results['straight.csv']![0]).toMatchObject({
      rows: 27,
      inserted: 24,
      updated: 1,
      rejected: 2,
      superseded: 0,
    });
    const name = (file: string | undefined) => file && path.basename(file);
    const byId = new Map(mine.transactions.map((row) => [row.transaction_id, { ...row, file: name(row.file) }]));
    expect(byId.get('T3')).toMatchObject({ amount_minor: '305', file: 'first.csv', line: 26 });
    expect(byId.get('T4')).toMatchObject({ amount_minor: '4444', file: 'first.csv', line: 27 });
    expect(byId.get('T11')).toMatchObject({ amount_minor: '1111', file: 'first.csv', line: 28 });
    expect(byId.get('T12')).toMatchObject({ amount_minor: '1205', file: 'first.csv', line: 15 });
    expect(byId.get('T5')).toMatchObject({ amount_minor: '505', file: 'first.csv', line: 6 });
    expect(byId.get('T6')).toMatchObject({ amount_minor: '6666', file: 'mixed.csv', line: 27 });
    expect(byId.get('T8')).toMatchObject({ amount_minor: '802', file: 'mixed.csv', line: 28 });
    expect(byId.get('T9')).toMatchObject({ amount_minor: '999', file: 'large.csv', line: 2_302 });
    expect(byId.get('T20')).toMatchObject({ amount_minor: '2005', file: 'two-headers.zip', entry: 'b.csv', line: 13 });
    expect(byId.get('T301')).toMatchObject({ amount_minor: '301', file: 'two-headers.zip', entry: 'a.csv', line: 15 });
    expect(byId.get('T10')).toMatchObject({ amount_minor: '1010', file: 'straight.csv', line: 18 });
    expect(byId.get('T513')).toMatchObject({ file: 'straight.csv', entry: null, line: 15 });
  });
});
