import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ingestFiles } from '../../pipelines/ingest-files.ts';
import { checkFirstIds, findChangedRecords } from '../../src/ingest/changed-rows-first.ts';
import { loadConfig } from '../../src/config/config.ts';
import type { Database } from '../../src/db/database.ts';
import { givenFile } from '../../src/ingest/export-file.ts';
import type { FileResult } from '../../src/ingest/file-result.ts';
import { MAX_CHANGED_LINES } from '../../src/ingest/load-plan.ts';
import { zipArchive } from '../../scripts/zip-archive.ts';
import { BACKENDS, createTestDatabase, hasPostgres, type TestDatabase } from '../support/test-database.ts';

const limits = loadConfig({}).limits;
const HEADER = 'TRANSACTIONID;ORDERID;DATE;AMOUNT;CURRENCY;EXECCODE';
const COUNT = 3_000;
const record = (n: number, amount = `${n}.05`, id = `T${n}`) =>
  `${id};O${n >> 1};2024-05-01 12:00:00;${amount};EUR;${n % 3}`;

/**
 * Files of one merchant's nightly windows, each mostly a repeat of the last: what the load plan's `changed-rows-first`
 * is for. Each hides a case where leaving a record out would be wrong.
 */
function files(): Record<string, Buffer> {
  const base = Array.from({ length: COUNT }, (_, i) => record(i + 1));
  const overlap = base.map((line, i) => {
    const n = i + 1;
    if (n === 5) return record(5, '99.99'); // changed
    if (n === 6) return `${record(6, '66.66')}\n${line}`; // changed, then back as stored: the last wins, unchanged
    if (n === 7) return `${line}\n${record(7, '77.77')}`; // as stored, then changed
    if (n === 8) return `${record(8, '88.88')}\n${record(8, 'not money')}`; // changed, then a rejected record
    return line;
  });
  overlap.push(record(COUNT + 1), record(COUNT + 2), record(COUNT + 3, 'bad'));
  // The same values under another header order: no digest matches, the columns are compared (and found equal).
  const reordered = [
    'ORDERID;TRANSACTIONID;DATE;AMOUNT;CURRENCY;EXECCODE',
    ...base.slice(100, 200).map((line) => {
      const [id, order, ...rest] = line.split(';');
      return [order, id, ...rest].join(';');
    }),
  ].join('\n');
  return {
    'base.csv': Buffer.from([HEADER, ...base].join('\n') + '\n'),
    'overlap.csv': Buffer.from([HEADER, ...overlap].join('\r\n') + '\r\n'),
    'two-entries.zip': zipArchive([
      { name: 'a.csv', data: Buffer.from([HEADER, ...base.slice(0, 2_000), record(9, '9.99')].join('\n')) },
      { name: 'b.csv', data: Buffer.from(reordered) },
    ]),
    'restored.csv': Buffer.from('\uFEFF' + [HEADER, ...base].join('\r\n')),
    // Every record as stored by now: nothing is staged at all.
    'unchanged.csv': Buffer.from([HEADER, ...base].join('\r\n')),
  };
}

describe.each(BACKENDS)('loading only the records that change stored rows, on %s', (backend) => {
  const skip = backend === 'postgres' && !hasPostgres;
  let probe: TestDatabase;
  let twoPass: TestDatabase;
  let whole: TestDatabase;
  let dir: string;
  let paths: Record<string, string>;

  beforeAll(async () => {
    if (skip) return;
    [probe, twoPass, whole] = await Promise.all([
      createTestDatabase(backend),
      createTestDatabase(backend),
      createTestDatabase(backend),
    ]);
    dir = await mkdtemp(path.join(os.tmpdir(), 'recon-unchanged-'));
    paths = {};
    for (const [name, data] of Object.entries(files())) {
      paths[name] = path.join(dir, name);
      await writeFile(paths[name], data);
    }
  });
  afterAll(async () => {
    await Promise.all([probe?.drop(), twoPass?.drop(), whole?.drop()]);
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  const phases: Record<string, Set<string>> = {};
  const ingest = (database: Database, name: string, changedRowsFirstMinBytes: number) =>
    ingestFiles(database, [paths[name]!], {
      timezone: 'UTC',
      limits,
      changedRowsFirstMinBytes,
      onProgress: (progress) => changedRowsFirstMinBytes === 0 && (phases[name] ??= new Set()).add(progress.phase),
    });
  const tables = async (database: Database) => ({
    transactions: await database.db
      .selectFrom('recon.transactions')
      .selectAll()
      .orderBy('transaction_id')
      .execute()
      .then((rows) => rows.map(({ updated_at: _updatedAt, ...kept }) => kept)),
    rejected: await database.db
      .selectFrom('recon.rejected_rows')
      .select(['file_id', 'entry', 'line', 'raw', 'reason'])
      .orderBy('file_id')
      .orderBy('entry')
      .orderBy('line')
      .execute(),
  });
  const counts = (results: FileResult[]) => results.map(({ file: _file, ...result }) => result);

  it.skipIf(skip)(
    'says which lines of a mostly loaded file to load, and how many ids it leaves as they are',
    async () => {
      await ingest(probe.database, 'base.csv', 0);
      const file = givenFile(paths['overlap.csv']!);
      const options = { timezone: 'UTC', limits };
      const [firstIds, changed] = await probe.database.transaction(async (connection) => [
        await checkFirstIds(connection, file, 1_000, options),
        await findChangedRecords(connection, file, MAX_CHANGED_LINES, options),
      ]);
      // The first 1,000 records hold T6, T7 and T8 twice each: 997 distinct ids, each stored (and counted) once.
      expect(firstIds).toEqual({ sampled: 1_000, stored: 997 });
      // Lines (header is 1): T5 at 6; T6 at 7 and 8; T7 at 9 and 10; T8 at 11 and 12; then T9 at 13 ... T3000 at 3004.
      expect(changed).toEqual({
        neededLines: new Map([[0, new Set([6, 9, 10, 11, 12, 3005, 3006, 3007])]]),
        unchangedIds: COUNT - 3,
        records: COUNT + 3 + 3,
      });
      expect(await probe.database.transaction((connection) => findChangedRecords(connection, file, 7, options))).toBe(
        'too-many',
      );
    },
  );

  it.skipIf(skip)('loads each file to the rows, lineage, counts and rejected rows of loading it whole', async () => {
    const sequence = ['base.csv', 'overlap.csv', 'two-entries.zip', 'restored.csv', 'unchanged.csv'];
    for (const name of sequence) {
      const [checked, loadedWhole] = [
        await ingest(twoPass.database, name, 0),
        await ingest(whole.database, name, Number.POSITIVE_INFINITY),
      ];
      expect(checked[0]!.status, name).toBe(loadedWhole[0]!.status);
      if (checked[0]!.status === 'loaded') {
        const { fileId: _a, ...mine } = counts(checked)[0]!;
        const { fileId: _b, ...theirs } = counts(loadedWhole)[0]!;
        expect(mine, name).toEqual(theirs);
      }
    }
    const [mine, theirs] = [await tables(twoPass.database), await tables(whole.database)];
    const fileNames = async (database: Database) =>
      new Map(
        (await database.db.selectFrom('recon.files').select(['file_id', 'name']).execute()).map((f) => [
          f.file_id,
          f.name,
        ]),
      );
    const [myFiles, theirFiles] = [await fileNames(twoPass.database), await fileNames(whole.database)];
    const named = (rows: { file_id: string }[], files: Map<string, string>) =>
      rows.map((row) => ({ ...row, file_id: files.get(row.file_id) }));
    expect(named(mine.transactions, myFiles)).toEqual(named(theirs.transactions, theirFiles));
    expect(named(mine.rejected, myFiles)).toEqual(named(theirs.rejected, theirFiles));
    expect(mine.transactions).toHaveLength(COUNT + 2);
    // A file of records all as stored is checked, then recorded: nothing read into staging, nothing merged.
    expect(phases['unchanged.csv']).toEqual(new Set(['checking', 'merging']));
    const last = await twoPass.database.db
      .selectFrom('recon.files')
      .select(['rows_total', 'rows_unchanged'])
      .orderBy('file_id', 'desc')
      .executeTakeFirstOrThrow();
    expect(last).toEqual({ rows_total: COUNT, rows_unchanged: COUNT });
  });
});
