import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ingestExportFile, ingestFiles } from '../../pipelines/ingest-files.ts';
import { loadConfig } from '../../src/config/config.ts';
import type { FileResult } from '../../src/ingest/file-result.ts';
import { packageRoot } from '../../src/package-root.ts';
import type { IngestProgress } from '../../src/terminal/progress-bar.ts';
import { BACKENDS, createTestDatabase, hasPostgres, type TestDatabase } from '../support/test-database.ts';
import { zipArchive } from '../../scripts/zip-archive.ts';

const fixture = (name: string) => path.join(packageRoot(), 'fixtures', name);
const limits = loadConfig({}).limits;

/** fixtures/README.md: file, rows, good (loaded), bad (rejected). */
const GOOD_FIXTURES: [string, number, number, number][] = [
  ['semicolon-bom-crlf.csv', 10, 10, 0],
  ['comma-quoted.csv', 8, 8, 0],
  ['subset-reordered.csv', 5, 5, 0],
  ['extra-column.csv', 5, 5, 0],
  ['header-only.csv', 0, 0, 0],
  ['single-member.csv.gz', 6, 6, 0],
  ['multi-member.csv.gz', 9, 9, 0],
  ['gzip-named-csv.csv', 4, 4, 0],
  ['single-stream.csv.bz2', 6, 6, 0],
  ['multi-stream.csv.bz2', 9, 9, 0],
  ['trailing-garbage.csv.bz2', 6, 6, 0],
  ['one-entry.zip', 6, 6, 0],
  ['two-entries.zip', 9, 9, 0],
  ['data-descriptor.zip', 6, 6, 0],
  ['zip64.zip', 6, 6, 0],
  ['bad-rows.csv', 13, 6, 7],
];

const FAILING_FIXTURES: [string, string][] = [
  ['empty.csv', 'FILE_EMPTY'],
  ['not-csv.bin', 'CSV_MALFORMED'],
  ['unclosed-quote.csv', 'CSV_MALFORMED'],
  ['no-transactionid.csv', 'CSV_HEADER'],
  ['old-format.csv', 'CSV_HEADER'],
  ['truncated.csv.gz', 'ARCHIVE_CORRUPT'],
  ['truncated.csv.bz2', 'ARCHIVE_CORRUPT'],
  ['corrupt.csv.bz2', 'ARCHIVE_CORRUPT'],
  ['corrupt.zip', 'ARCHIVE_CORRUPT'],
  ['truncated.zip', 'ARCHIVE_CORRUPT'],
  ['encrypted.zip', 'ARCHIVE_ENCRYPTED'],
  ['empty.zip', 'ARCHIVE_EMPTY'],
  ['no-csv-entry.zip', 'ARCHIVE_EMPTY'],
  ['duplicate-entry.zip', 'ARCHIVE_CORRUPT'],
  ['directory-past-end.zip', 'ARCHIVE_CORRUPT'],
  ['bomb.zip', 'LIMIT_EXCEEDED'],
  ['bomb.csv.gz', 'LIMIT_EXCEEDED'],
];

/** A plain export of `count` good rows with ids `<prefix><n>`, then `tail` appended as is. */
function syntheticCsv(prefix: string, count: number, tail = ''): Buffer {
  let text = 'TRANSACTIONID;DATE;AMOUNT;CURRENCY;EXECCODE\n';
  for (let n = 1; n <= count; n++) text += `${prefix}${n};2024-05-01 12:00:00;${n}.05;EUR;${n % 3}\n`;
  return Buffer.from(text + tail);
}

describe.each(BACKENDS)('ingestFiles on %s', (backend) => {
  const skip = backend === 'postgres' && !hasPostgres;
  let testDb: TestDatabase;
  let tmp: string;
  beforeAll(async () => {
    if (skip) return;
    tmp = await mkdtemp(path.join(os.tmpdir(), 'recon-ingest-'));
    testDb = await createTestDatabase(backend);
  });
  afterAll(async () => {
    await testDb?.drop();
    if (tmp) await rm(tmp, { recursive: true, force: true });
  });
  // The tables a load writes emptied before each test, as a new database has them: each test loads the files it
  // reads, whatever ran before it or was filtered out. A new PGlite database a test cost a second or two of its time.
  beforeEach(async () => {
    if (skip) return;
    // Transactions first: recon.files refuses a truncate while rows point to its files.
    await testDb.database.transaction((c) =>
      c.exec('TRUNCATE recon.transactions, recon.rejected_rows; TRUNCATE recon.files RESTART IDENTITY CASCADE'),
    );
  });

  /** Loads fixtures a test reads, expecting each to load. */
  async function loadFixtures(...names: string[]): Promise<FileResult[]> {
    const results = await ingest(names.map(fixture));
    expect(results.map((result) => result.status)).toEqual(names.map(() => 'loaded'));
    return results;
  }

  const ingest = (paths: string[], timezone = 'UTC') => ingestFiles(testDb.database, paths, { timezone, limits });

  async function query<Row = Record<string, unknown>>(text: string, params: unknown[] = []): Promise<Row[]> {
    return (await testDb.database.transaction((c) => c.query<Row>(text, params))).rows;
  }

  async function tableCounts() {
    const [row] = await query<{ files: number; transactions: number; rejected: number; last_update: string | null }>(
      `SELECT (SELECT count(*) FROM recon.files)::int AS files, (SELECT count(*) FROM recon.transactions)::int AS transactions,
              (SELECT count(*) FROM recon.rejected_rows)::int AS rejected, (SELECT max(updated_at)::text FROM recon.transactions) AS last_update`,
    );
    return row!;
  }

  async function write(name: string, data: Buffer): Promise<string> {
    const file = path.join(tmp, name);
    await writeFile(file, data);
    return file;
  }

  it.skipIf(skip)("loads every good fixture with fixtures/README.md's counts", async () => {
    const results = await ingest(GOOD_FIXTURES.map(([name]) => fixture(name)));
    expect(
      results.map((r) => [
        path.basename(r.file),
        r.status,
        r.status === 'loaded' && [r.rows, r.inserted, r.rejected, r.updated, r.unchanged, r.superseded],
      ]),
    ).toEqual(GOOD_FIXTURES.map(([name, rows, good, bad]) => [name, 'loaded', [rows, good, bad, 0, 0, 0]]));
    const files = await query(
      `SELECT name, status, compression, rows_total, rows_inserted, rows_updated, rows_unchanged, rows_rejected, error, finished_at IS NOT NULL AS finished
       FROM recon.files ORDER BY file_id`,
    );
    expect(files).toHaveLength(GOOD_FIXTURES.length);
    expect(files[0]).toEqual({
      name: fixture('semicolon-bom-crlf.csv'),
      status: 'loaded',
      compression: 'none',
      rows_total: 10,
      rows_inserted: 10,
      rows_updated: 0,
      rows_unchanged: 0,
      rows_rejected: 0,
      error: null,
      finished: true,
    });
    expect(files.map((f) => f.compression)).toEqual([
      'none',
      'none',
      'none',
      'none',
      'none',
      'gzip',
      'gzip',
      'gzip',
      'bzip2',
      'bzip2',
      'bzip2',
      'zip',
      'zip',
      'zip',
      'zip',
      'none',
    ]);
    expect((await tableCounts()).transactions).toBe(GOOD_FIXTURES.reduce((sum, [, , good]) => sum + good, 0));
  });

  it.skipIf(skip)('stores normalized values with their lineage: file, zip entry and csv line', async () => {
    await loadFixtures('semicolon-bom-crlf.csv', 'two-entries.zip');
    const rows = await query(
      `SELECT t.transaction_id, t.identifier, t.order_id, t.operation_type, to_char(t.occurred_at AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS') AS occurred_at,
              t.amount_minor::text AS amount_minor, t.currency, t.exec_code, t.fees_minor::text AS fees_minor, t.schedule_index, t.schedule_count,
              t.retry_index, t.retry_count, t.client_address, t.card_full_name, t.three_ds_global_status, t.rule_applied, t.extra,
              f.name AS file, t.entry, t.line
       FROM recon.transactions t JOIN recon.files f USING (file_id)
       WHERE t.transaction_id IN ('A100001', 'A100002', 'A100003', 'A100004', 'A100005', 'A100006', 'A100007') ORDER BY t.transaction_id`,
    );
    const reference = fixture('semicolon-bom-crlf.csv');
    expect(rows[0]).toEqual({
      transaction_id: 'A100001',
      identifier: 'ACME-SHOP',
      order_id: 'ORD-2024-001001',
      operation_type: 'authorization',
      occurred_at: '2024-03-02 05:17:13',
      amount_minor: '9050',
      currency: 'EUR',
      exec_code: '0000',
      fees_minor: '13',
      schedule_index: 2,
      schedule_count: 3,
      retry_index: null,
      retry_count: null,
      client_address: '2 rue de la Paix, 75002 Paris',
      card_full_name: 'Paul Lefèvre',
      three_ds_global_status: null,
      rule_applied: null,
      extra: {},
      file: reference,
      entry: null,
      line: 2,
    });
    expect(rows.map((r) => [r.transaction_id, r.line])).toEqual([
      ['A100001', 2],
      ['A100002', 3],
      ['A100003', 4],
      ['A100004', 5],
      ['A100005', 7],
      ['A100006', 8],
      ['A100007', 9],
    ]);
    expect(rows[1]).toMatchObject({ card_full_name: 'Jean "JJ" Dupont', exec_code: '4001' });
    expect(rows[2]).toMatchObject({
      rule_applied: 'velocity; amount > 1000',
      exec_code: '0003',
      retry_index: 1,
      retry_count: 2,
      occurred_at: '2024-03-31 01:30:00',
    });
    expect(rows[3]).toMatchObject({ client_address: '12 rue de la Paix\n75002 Paris' });
    expect(rows[4]).toMatchObject({ exec_code: '0002' });
    expect(rows[5]).toMatchObject({ amount_minor: '1500', currency: 'JPY', fees_minor: '15' });
    expect(rows[6]).toMatchObject({ amount_minor: '12345', currency: 'KWD', fees_minor: '120' });

    const zipped = await query(
      'SELECT entry, count(*)::int AS n FROM recon.transactions t JOIN recon.files f USING (file_id) WHERE f.name = $1 GROUP BY entry ORDER BY entry',
      [fixture('two-entries.zip')],
    );
    expect(zipped.map((r) => r.n)).toEqual([4, 5]);
    expect(zipped.every((r) => typeof r.entry === 'string' && r.entry.endsWith('.csv'))).toBe(true);
  });

  it.skipIf(skip)('keeps unknown columns in extra under their header name', async () => {
    await loadFixtures('extra-column.csv');
    const rows = await query<{ extra: unknown }>(
      "SELECT extra FROM recon.transactions WHERE transaction_id LIKE 'A4%' ORDER BY transaction_id",
    );
    expect(rows.map((r) => r.extra)).toEqual([10, 20, 30, 40, 50].map((score) => ({ 'RISK SCORE': String(score) })));
  });

  it.skipIf(skip)('keeps rejected rows with their line, raw text and a reason naming the column', async () => {
    await loadFixtures('bad-rows.csv');
    const rows = await query<{ line: number; raw: string; reason: string; entry: string | null }>(
      'SELECT r.entry, r.line, r.raw, r.reason FROM recon.rejected_rows r JOIN recon.files f USING (file_id) WHERE f.name = $1 ORDER BY r.line',
      [fixture('bad-rows.csv')],
    );
    const lines = (await readFile(fixture('bad-rows.csv'), 'utf8')).split('\n');
    expect(rows.map((r) => r.line)).toEqual([3, 5, 7, 9, 11, 13, 14]);
    expect(rows.map((r) => r.raw)).toEqual(rows.map((r) => lines[r.line - 1]));
    expect(rows.every((r) => r.entry === null)).toBe(true);
    const reasons = rows.map((r) => r.reason);
    expect(reasons[0]).toMatch(/EXECCODE.*12345/);
    expect(reasons[1]).toMatch(/AMOUNT.*12,30/);
    expect(reasons[2]).toMatch(/SCHEDULE.*\[4-3\]/);
    expect(reasons[3]).toMatch(/DATE.*2024-02-30/);
    expect(reasons[4]).toMatch(/AMOUNT.*1500\.5.*JPY/);
    expect(reasons[5]).toMatch(/TRANSACTIONID/);
    expect(reasons[6]).toMatch(/19.*5|5.*19/);
    const loaded = await query("SELECT count(*)::int AS n FROM recon.transactions WHERE transaction_id LIKE 'A20001%'");
    expect(loaded[0]!.n).toBe(0);
  });

  it.skipIf(skip)('reports a re-ingest of the same bytes as a duplicate and changes nothing', async () => {
    const loaded = await loadFixtures('semicolon-bom-crlf.csv', 'bad-rows.csv', 'two-entries.zip');
    const before = await tableCounts();
    const results = await ingest([
      fixture('semicolon-bom-crlf.csv'),
      fixture('bad-rows.csv'),
      fixture('two-entries.zip'),
    ]);
    expect(results.map((r) => r.status)).toEqual(['duplicate', 'duplicate', 'duplicate']);
    expect(results.map((r) => r.fileId)).toEqual(loaded.map((r) => r.fileId));
    expect(results[0]).toMatchObject({ sha256: expect.stringMatching(/^[0-9a-f]{64}$/) });
    expect(await tableCounts()).toEqual(before);
  });

  it.skipIf(skip)('updates from a newer export only the rows that changed', async () => {
    const [older] = await loadFixtures('semicolon-bom-crlf.csv');
    const [result] = await ingest([fixture('newer-export.csv')]);
    expect(result).toMatchObject({
      status: 'loaded',
      rows: 10,
      inserted: 0,
      updated: 3,
      unchanged: 7,
      rejected: 0,
      superseded: 0,
    });
    const rows = await query<{
      transaction_id: string;
      file_id: string;
      exec_code: string;
      three_ds_global_status: string | null;
    }>(
      "SELECT transaction_id, file_id::text AS file_id, exec_code, three_ds_global_status FROM recon.transactions WHERE transaction_id LIKE 'A1000%' ORDER BY transaction_id",
    );
    const changed = rows.filter((r) => r.file_id === result!.fileId).map((r) => r.transaction_id);
    expect(changed).toEqual(['A100001', 'A100003', 'A100009']);
    expect(rows.filter((r) => r.file_id === older!.fileId)).toHaveLength(7);
    expect(rows.find((r) => r.transaction_id === 'A100003')!.exec_code).toBe('0000');
  });

  it.skipIf(skip)('records each broken fixture as failed with its code, and commits nothing of it', async () => {
    const results = await ingest(FAILING_FIXTURES.map(([name]) => fixture(name)));
    expect(results.map((r) => [path.basename(r.file), r.status, r.status === 'failed' && r.errorCode])).toEqual(
      FAILING_FIXTURES.map(([name, code]) => [name, 'failed', code]),
    );
    for (const result of results as Extract<FileResult, { status: 'failed' }>[]) {
      expect(result.error).toContain(result.file);
      expect(result.error).not.toContain('\n');
    }
    const files = await query<{
      file_id: string;
      status: string;
      error_code: string;
      error: string;
      rows_total: number | null;
    }>(
      // By the bigint, not the text alias: ids 9 and 10 sort the other way as text.
      'SELECT file_id::text AS file_id, status, error_code, error, rows_total FROM recon.files WHERE file_id = ANY ($1::bigint[]) ORDER BY files.file_id',
      [results.map((r) => r.fileId)],
    );
    expect(files.map((f) => [f.status, f.error_code, f.rows_total])).toEqual(
      FAILING_FIXTURES.map(([, code]) => ['failed', code, null]),
    );
    const [left] = await query<{ transactions: number; rejected: number }>(
      `SELECT (SELECT count(*) FROM recon.transactions WHERE file_id = ANY ($1::bigint[]))::int AS transactions,
              (SELECT count(*) FROM recon.rejected_rows WHERE file_id = ANY ($1::bigint[]))::int AS rejected`,
      [results.map((r) => r.fileId)],
    );
    expect(left).toEqual({ transactions: 0, rejected: 0 });
  });

  it.skipIf(skip)(
    'names a file by the name it is given, not the path it is read from, in recon.files and in every message',
    async () => {
      const named = (name: string) => ({
        path: fixture(name),
        name: `delivered ${name}`,
        arrival: { kind: 'ingest' } as const,
      });
      const warnings: string[] = [];
      const trailing = await write(
        'trailing.zip',
        Buffer.concat([zipArchive([{ name: 'export.csv', data: syntheticCsv('NM', 2) }]), Buffer.from('junk')]),
      );
      const loaded = await ingestExportFile(
        testDb.database,
        { path: trailing, name: 'delivered trailing.zip', arrival: { kind: 'ingest' } },
        { timezone: 'UTC', limits, onWarning: (warning) => warnings.push(warning) },
      );
      expect(loaded).toMatchObject({ file: 'delivered trailing.zip', status: 'loaded' });
      expect(warnings).toEqual(['delivered trailing.zip: 4 bytes after the end of the zip archive ignored']);

      const failed: FileResult[] = [];
      for (const [name] of FAILING_FIXTURES)
        failed.push(await ingestExportFile(testDb.database, named(name), { timezone: 'UTC', limits }));
      for (const [index, result] of failed.entries()) {
        const [name] = FAILING_FIXTURES[index]!;
        expect(result).toMatchObject({
          file: `delivered ${name}`,
          status: 'failed',
          error: expect.stringMatching(new RegExp(`^delivered ${name.replaceAll('.', '\\.')}: `)),
        });
        expect((result as { error: string }).error).not.toContain(path.join(packageRoot(), 'fixtures'));
      }
      const files = await query<{ name: string; error: string | null }>(
        'SELECT name, error FROM recon.files ORDER BY file_id',
      );
      expect(files.map((file) => file.name)).toEqual(
        ['trailing.zip', ...FAILING_FIXTURES.map(([name]) => name)].map((name) => `delivered ${name}`),
      );
      for (const file of files) expect(file.error ?? '').not.toContain(path.join(packageRoot(), 'fixtures'));
    },
  );

  it.skipIf(skip)('commits nothing of a file that fails after thousands of staged and rejected rows', async () => {
    const before = await tableCounts();
    const badRows = 'B1bad;2024-05-01 12:00:00;1,00;EUR;0\n'.repeat(50);
    const lateQuote = await write(
      'late-quote.csv',
      syntheticCsv('LQ', 12_000, badRows + 'LQX;2024-05-01 12:00:00;"1.00;EUR;0\n'),
    );
    const truncatedGzip = gzipSync(syntheticCsv('TG', 20_000));
    const lateTruncation = await write('late-truncation.csv.gz', truncatedGzip.subarray(0, truncatedGzip.length - 40));
    const badLastEntry = await write(
      'bad-last-entry.zip',
      zipArchive([
        { name: 'part-1.csv', data: syntheticCsv('LE', 5_000, badRows) },
        { name: 'part-2.csv', data: Buffer.from('ORDERID;AMOUNT\nx;1.00\n') },
      ]),
    );
    const good = await write('good-after.csv', syntheticCsv('GA', 3));

    const results = await ingest([lateQuote, lateTruncation, badLastEntry, good]);
    expect(results.map((r) => [r.status, r.status === 'failed' ? r.errorCode : r.status])).toEqual([
      ['failed', 'CSV_MALFORMED'],
      ['failed', 'ARCHIVE_CORRUPT'],
      ['failed', 'CSV_HEADER'],
      ['loaded', 'loaded'],
    ]);
    expect((results[0] as { error: string }).error).toMatch(/late-quote\.csv: line 12052: /);
    expect((results[2] as { error: string }).error).toContain('part-2.csv');
    const after = await tableCounts();
    expect(after.transactions).toBe(before.transactions + 3);
    expect(after.rejected).toBe(before.rejected);
    expect(after.files).toBe(before.files + 4);
    const leaked = await query(
      "SELECT count(*)::int AS n FROM recon.transactions WHERE transaction_id ~ '^(LQ|TG|LE)'",
    );
    expect(leaked[0]!.n).toBe(0);
  });

  it.skipIf(skip)('records a database error as a failed file naming it, and the next file still loads', async () => {
    await testDb.database.transaction((c) =>
      c.exec(`
        CREATE FUNCTION public.refuse_boom() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
          IF NEW.transaction_id = 'BOOM' THEN RAISE EXCEPTION 'refused by test trigger'; END IF;
          RETURN NEW;
        END $$;
        CREATE TRIGGER refuse_boom BEFORE INSERT ON recon.transactions FOR EACH ROW EXECUTE FUNCTION public.refuse_boom();`),
    );
    try {
      const before = await tableCounts();
      const boom = await write(
        'boom.csv',
        syntheticCsv('BM', 3_000, 'BOOM;2024-05-01 12:00:00;1.00;EUR;0\nBMbad;x;1.00;EUR;0\n'),
      );
      const next = await write('after-boom.csv', syntheticCsv('AB', 2));
      const results = await ingest([boom, next]);
      expect(results[0]).toMatchObject({
        status: 'failed',
        errorCode: 'DATABASE',
        error: expect.stringMatching(/boom\.csv: .*refused by test trigger/),
      });
      expect(results[1]).toMatchObject({ status: 'loaded', inserted: 2 });
      const after = await tableCounts();
      expect([after.transactions, after.rejected, after.files]).toEqual([
        before.transactions + 2,
        before.rejected,
        before.files + 2,
      ]);
    } finally {
      await testDb.database.transaction((c) =>
        c.exec('DROP TRIGGER refuse_boom ON recon.transactions; DROP FUNCTION public.refuse_boom();'),
      );
    }
  });

  it.skipIf(skip)('keeps the last row of a transaction id that a file carries twice', async () => {
    const twice = await write(
      'twice.csv',
      Buffer.from('TRANSACTIONID;AMOUNT;CURRENCY\nTW1;1.00;EUR\nTW2;2.00;EUR\nTW1;3.00;EUR\n'),
    );
    const [result] = await ingest([twice]);
    expect(result).toMatchObject({
      status: 'loaded',
      rows: 3,
      inserted: 2,
      updated: 0,
      unchanged: 0,
      superseded: 1,
      rejected: 0,
    });
    const rows = await query(
      "SELECT amount_minor::text AS amount, line FROM recon.transactions WHERE transaction_id = 'TW1'",
    );
    expect(rows).toEqual([{ amount: '300', line: 4 }]);
  });

  it.skipIf(skip)('reports progress as the bytes of the file read while reading, then once when merging', async () => {
    const plain = await write('progress.csv', syntheticCsv('PG', 30_000));
    const gzipped = await write('progress.csv.gz', gzipSync(syntheticCsv('PZ', 5_000)));
    const events: IngestProgress[] = [];
    await ingestFiles(testDb.database, [plain, gzipped], {
      timezone: 'UTC',
      limits,
      onProgress: (progress) => events.push(progress),
    });
    const increasing = (values: number[]) => expect(values).toEqual([...values].sort((a, b) => a - b));

    const reading = events.filter((event) => event.file === plain && event.phase === 'reading');
    expect(reading.length).toBeGreaterThan(1);
    increasing(reading.map((event) => event.rows));
    increasing(reading.map((event) => event.bytesRead));
    const { size } = await stat(plain);
    expect(reading[0]!.bytesRead).toBeLessThan(size);
    expect(events.filter((event) => event.file === plain).at(-1)).toEqual({
      file: plain,
      phase: 'merging',
      fileBytes: size,
      bytesRead: size,
      rows: 30_000,
    });

    // A compressed file's share is of its compressed bytes: the size known before decompressing.
    const compressedSize = (await stat(gzipped)).size;
    const gzipEvents = events.filter((event) => event.file === gzipped);
    expect(gzipEvents.filter((event) => event.phase === 'reading').at(-1)).toMatchObject({
      fileBytes: compressedSize,
      bytesRead: compressedSize,
      rows: 5_000,
    });
    expect(gzipEvents.at(-1)).toMatchObject({ phase: 'merging', bytesRead: compressedSize });
  });

  it.skipIf(skip)(
    'rolls back the file being loaded when aborted, even during its merge, and starts no other',
    async () => {
      const before = await tableCounts();
      const first = await write('before-abort.csv', syntheticCsv('BA', 3));
      const aborted = await write('aborted.csv', syntheticCsv('AX', 3_000));
      const after = await write('after-abort.csv', syntheticCsv('AF', 3));
      const controller = new AbortController();
      const reason = new Error('stop');
      const results: FileResult[] = [];
      const run = ingestFiles(testDb.database, [first, aborted, after], {
        timezone: 'UTC',
        limits,
        signal: controller.signal,
        onResult: (result) => results.push(result),
        onProgress: (progress) => {
          if (progress.file === aborted && progress.phase === 'merging') controller.abort(reason);
        },
      });
      await expect(run).rejects.toBe(reason);
      expect(results.map((result) => [path.basename(result.file), result.status])).toEqual([
        ['before-abort.csv', 'loaded'],
      ]);
      const now = await tableCounts();
      expect([now.files, now.transactions, now.rejected]).toEqual([
        before.files + 1,
        before.transactions + 3,
        before.rejected,
      ]);
    },
  );

  it.skipIf(skip)('reads DATE in the zone it is given', async () => {
    const paris = await write(
      'paris.csv',
      Buffer.from('TRANSACTIONID;DATE\nTZ1;2024-07-01 12:00:00\nTZ2;2024-01-15 08:30:00\n'),
    );
    await ingest([paris], 'Europe/Paris');
    const rows = await query(
      "SELECT to_char(occurred_at AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS') AS utc FROM recon.transactions WHERE transaction_id IN ('TZ1', 'TZ2') ORDER BY transaction_id",
    );
    expect(rows.map((r) => r.utc)).toEqual(['2024-07-01 10:00:00', '2024-01-15 07:30:00']);
  });

  it.skipIf(skip)('ends a concurrent second load of the same bytes as a duplicate', async () => {
    const file = await write('raced.csv', syntheticCsv('RC', 2_000));
    const copy = await write('raced-copy.csv', syntheticCsv('RC', 2_000));
    const results = await Promise.all([ingest([file]), ingest([copy])]);
    expect(results.map(([r]) => r!.status).sort()).toEqual(['duplicate', 'loaded']);
    const loaded = await query("SELECT count(*)::int AS n FROM recon.files WHERE name LIKE '%raced%'");
    expect(loaded[0]!.n).toBe(1);
  });

  it.skipIf(skip)('reports a file it cannot read without recording it, and goes on', async () => {
    const before = await tableCounts();
    const good = await write('after-missing.csv', syntheticCsv('AM', 1));
    const results = await ingest([path.join(tmp, 'no-such-file.csv'), good]);
    expect(results[0]).toMatchObject({
      status: 'failed',
      fileId: null,
      errorCode: 'FILE_UNREADABLE',
      error: expect.stringMatching(/no-such-file\.csv.*ENOENT/),
    });
    expect(results[1]!.status).toBe('loaded');
    expect((await tableCounts()).files).toBe(before.files + 1);
  });

  it.skipIf(skip)('refuses an unknown time zone before touching any file', async () => {
    const before = await tableCounts();
    await expect(ingest([fixture('semicolon-bom-crlf.csv')], 'Mars/Olympus')).rejects.toMatchObject({ code: 'CONFIG' });
    expect(await tableCounts()).toEqual(before);
  });
});
