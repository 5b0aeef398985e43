import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { constants as zlibConstants, gunzipSync, gzipSync } from 'node:zlib';
import { writeZip } from '@recon/sandbox';
import { sql } from 'kysely';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { BACKENDS, createTestDatabase, hasPostgres, type TestDatabase } from '../support/test-database.ts';
import { ACCOUNT_NOT_CONFIGURED } from '../../src/normalize/row-scope.ts';
import { RECON_TABLES } from '../support/recon-tables.ts';
import { oneProcessPerExitCode, runRecon, runReconInProcess } from './run-recon.ts';

const fixture = (name: string) => path.join('fixtures', name);
/** recon's tables but the migrations' own records, which a new database has filled. */
const WRITTEN_TABLES = RECON_TABLES.filter(
  (table) => !['schema_migrations', 'schema_definitions', 'reporting_grants'].includes(table),
);
// Each exit code's first run in this file is a process of its own, on whichever backend runs first; the others run in
// this one. A process on PGlite opens its database from scratch: seconds of CPU for nothing the exit code depends on.
const variant = oneProcessPerExitCode();

describe.each(BACKENDS)('recon ingest on %s', (backend) => {
  const skip = backend === 'postgres' && !hasPostgres;
  let testDb: TestDatabase | undefined;
  beforeAll(async () => {
    if (skip) return;
    testDb = await createTestDatabase(backend);
  });
  afterAll(async () => {
    await testDb?.drop();
    testDb = undefined;
  });
  // Each test sets up the files it expects to find loaded, whatever ran before it: the tables the commands wrote are
  // emptied first, as a new database has them (a database a test cost its creation and drop, seconds under load).
  beforeEach(async () => {
    if (skip) return;
    const { db } = await testDb!.reopen();
    const written = (
      await sql<{ name: string }>`${sql.join(
        WRITTEN_TABLES.map(
          (table) => sql`SELECT ${table} AS name WHERE EXISTS (SELECT FROM ${sql.table(`recon.${table}`)})`,
        ),
        sql` UNION ALL `,
      )}`.execute(db)
    ).rows.map((row) => row.name);
    // recon.files last: it refuses a truncate while rows point to its files.
    for (const tables of [written.filter((name) => name !== 'files'), written.filter((name) => name === 'files')])
      if (tables.length > 0)
        await sql`TRUNCATE ${sql.join(tables.map((name) => sql.table(`recon.${name}`)))} RESTART IDENTITY CASCADE`.execute(
          db,
        );
    // A PGlite directory is opened by one process at a time: the CLI's, while it runs.
    await testDb!.close();
  });

  const ingest = (...args: string[]) => runReconInProcess(['ingest', ...args], testDb!.env);
  const ingestExiting = (code: number, ...args: string[]) => variant(['ingest', ...args], testDb!.env, code);

  it.skipIf(skip)(
    'prints a summary line per file and exits 0 when every file loads without rejected rows',
    async () => {
      const result = await ingestExiting(0, fixture('semicolon-bom-crlf.csv'), fixture('two-entries.zip'));
      expect(result).toEqual({
        code: 0,
        stdout:
          'fixtures/semicolon-bom-crlf.csv: loaded rows=10 inserted=10 updated=0 unchanged=0 rejected=0\n' +
          'fixtures/two-entries.zip: loaded rows=9 inserted=9 updated=0 unchanged=0 rejected=0\n',
        stderr: '',
      });
    },
  );

  it.skipIf(skip)('prints one JSON object per file with --json; duplicates still exit 0', async () => {
    const first = await ingest('--json', fixture('semicolon-bom-crlf.csv'));
    const { fileId } = JSON.parse(first.stdout) as { fileId: string };
    const result = await ingest('--json', fixture('semicolon-bom-crlf.csv'), fixture('newer-export.csv'));
    expect(result.code).toBe(0);
    const lines = result.stdout
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line));
    expect(lines).toEqual([
      expect.objectContaining({
        file: 'fixtures/semicolon-bom-crlf.csv',
        status: 'duplicate',
        fileId,
        compression: 'none',
        rows: null,
      }),
      expect.objectContaining({
        file: 'fixtures/newer-export.csv',
        status: 'loaded',
        rows: 10,
        inserted: 0,
        updated: 3,
        unchanged: 7,
        rejected: 0,
        error: null,
      }),
    ]);
  });

  it.skipIf(skip)('exits 3 when rows were rejected', async () => {
    const result = await ingestExiting(3, '--json', fixture('bad-rows.csv'));
    expect(result.code).toBe(3);
    expect(JSON.parse(result.stdout)).toMatchObject({ status: 'loaded', rows: 13, inserted: 6, rejected: 7 });
  });

  it.skipIf(skip)('exits 2 when a file failed, after loading the others', async () => {
    const before = await ingest('--json', fixture('bad-rows.csv'));
    const { fileId } = JSON.parse(before.stdout) as { fileId: string };
    const result = await ingestExiting(
      2,
      fixture('truncated.csv.gz'),
      fixture('comma-quoted.csv'),
      fixture('bad-rows.csv'),
    );
    expect(result.code).toBe(2);
    expect(result.stdout.split('\n')).toEqual([
      expect.stringMatching(/^fixtures\/truncated\.csv\.gz: failed: .*gzip/),
      'fixtures/comma-quoted.csv: loaded rows=8 inserted=8 updated=0 unchanged=0 rejected=0',
      `fixtures/bad-rows.csv: duplicate of file ${fileId}, nothing changed`,
      '',
    ]);
    expect(result.stderr).toBe('');

    const database = await testDb!.reopen();
    try {
      const files = await database.db
        .selectFrom('recon.files')
        .select(['name', 'status', 'error_code'])
        .orderBy('file_id')
        .execute();
      expect(files.map((file) => `${file.name} ${file.status}:${file.error_code ?? ''}`)).toEqual([
        'fixtures/bad-rows.csv loaded:',
        'fixtures/truncated.csv.gz failed:ARCHIVE_CORRUPT',
        'fixtures/comma-quoted.csv loaded:',
      ]);
    } finally {
      await testDb!.close();
    }
  });

  it.skipIf(skip)(
    'reads DATE in the --timezone zone over RECON_TIMEZONE, and in RECON_TIMEZONE without the flag',
    async () => {
      const dir = await mkdtemp(path.join(os.tmpdir(), 'recon-zone-'));
      try {
        const tokyo = path.join(dir, 'tokyo.csv');
        const paris = path.join(dir, 'paris.csv');
        await writeFile(tokyo, 'TRANSACTIONID;DATE\nZONE1;2024-07-01 12:00:00\n');
        await writeFile(paris, 'TRANSACTIONID;DATE\nZONE2;2024-07-01 12:00:00\n');
        const env = { ...testDb!.env, RECON_TIMEZONE: 'Asia/Tokyo' };
        expect((await runReconInProcess(['ingest', tokyo], env)).code).toBe(0);
        expect((await runReconInProcess(['ingest', '--timezone', 'Europe/Paris', paris], env)).code).toBe(0);
      } finally {
        await rm(dir, { recursive: true, force: true });
      }
      const database = await testDb!.reopen();
      try {
        const rows = await database.db
          .selectFrom('recon.transactions')
          .select(['transaction_id', sql<string>`to_char(occurred_at AT TIME ZONE 'UTC', 'HH24:MI')`.as('utc')])
          .where('transaction_id', 'in', ['ZONE1', 'ZONE2'])
          .orderBy('transaction_id')
          .execute();
        expect(rows).toEqual([
          { transaction_id: 'ZONE1', utc: '03:00' },
          { transaction_id: 'ZONE2', utc: '10:00' },
        ]);
      } finally {
        await testDb!.close();
      }
    },
  );

  it.skipIf(skip)(
    'rejects the rows of an account recon is not configured with, once accounts are configured, and only then',
    async () => {
      const dir = await mkdtemp(path.join(os.tmpdir(), 'recon-accounts-'));
      const header = 'IDENTIFIER;TRANSACTIONID;ORDERID;AMOUNT;CURRENCY;EXECCODE';
      const files = {
        listed: ['shop-a;ACC1;O1;10.00;EUR;0000', 'shop-evil;ACC2;O2;500.00;EUR;0000', ';ACC3;O3;1.00;EUR;0000'],
        pair: ['shop-a;ACC4;O4;4.00;EUR;0000', 'shop-b;ACC5;O5;5.00;EUR;0000'],
        none: ['shop-evil;ACC6;O6;6.00;EUR;0000'],
      };
      const paths = Object.fromEntries(Object.keys(files).map((name) => [name, path.join(dir, `${name}.csv`)]));
      try {
        for (const [name, rows] of Object.entries(files))
          await writeFile(paths[name]!, `${header}\n${rows.join('\n')}\n`);
        const accounts = JSON.stringify([
          { identifier: 'shop-a', secret: 'secret-a' },
          { identifier: 'shop-b', secret: 'secret-b', group: 'pair' },
        ]);
        const listed = await runReconInProcess(['ingest', paths.listed!], { ...testDb!.env, RECON_ACCOUNTS: accounts });
        expect(listed).toMatchObject({
          code: 3,
          stdout: `${paths.listed}: loaded rows=3 inserted=2 updated=0 unchanged=0 rejected=1\n`,
        });
        // The single account of RECON_IDENTIFIER and RECON_SECRET is configured accounts too.
        const pair = await runReconInProcess(['ingest', '--json', paths.pair!], {
          ...testDb!.env,
          RECON_IDENTIFIER: 'shop-a',
          RECON_SECRET: 'secret-a',
        });
        expect(pair.code).toBe(3);
        expect(JSON.parse(pair.stdout)).toMatchObject({ rows: 2, inserted: 1, rejected: 1 });
        // No account configured: every row loads, as before accounts.
        const none = await runReconInProcess(['ingest', paths.none!], testDb!.env);
        expect(none).toMatchObject({
          code: 0,
          stdout: `${paths.none}: loaded rows=1 inserted=1 updated=0 unchanged=0 rejected=0\n`,
        });
      } finally {
        await rm(dir, { recursive: true, force: true });
      }
      const database = await testDb!.reopen();
      try {
        const stored = await database.db
          .selectFrom('recon.transactions')
          .select(['transaction_id', 'identifier'])
          .orderBy('transaction_id')
          .execute();
        expect(stored).toEqual([
          { transaction_id: 'ACC1', identifier: 'shop-a' },
          { transaction_id: 'ACC3', identifier: null },
          { transaction_id: 'ACC4', identifier: 'shop-a' },
          { transaction_id: 'ACC6', identifier: 'shop-evil' },
        ]);
        const rejected = await database.db
          .selectFrom('recon.rejected_rows as r')
          .innerJoin('recon.files as f', 'f.file_id', 'r.file_id')
          .select(['f.name', 'f.rows_rejected', 'r.line', 'r.raw', 'r.reason'])
          .orderBy('r.rejected_row_id')
          .execute();
        expect(rejected).toEqual([
          { name: paths.listed, rows_rejected: 1, line: 3, raw: files.listed[1], reason: ACCOUNT_NOT_CONFIGURED },
          { name: paths.pair, rows_rejected: 1, line: 3, raw: files.pair[1], reason: ACCOUNT_NOT_CONFIGURED },
        ]);
      } finally {
        await testDb!.close();
      }
    },
  );
});

describe('recon ingest usage', () => {
  // On the backend that runs first: nothing checked here depends on it, and a PGlite database is seconds to open.
  let testDb: TestDatabase;
  let dir: string;
  beforeAll(async () => {
    testDb = await createTestDatabase(hasPostgres ? 'postgres' : 'pglite');
    await testDb.close();
    dir = await mkdtemp(path.join(os.tmpdir(), 'recon-cli-'));
  });
  afterAll(async () => {
    await testDb?.drop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  const ingest = (...args: string[]) => runReconInProcess(['ingest', ...args], testDb.env);

  it('exits 1 without a file, with an unknown option, or with an unknown zone', async () => {
    const noFile = await variant(['ingest'], testDb.env, 1);
    expect(noFile).toMatchObject({ code: 1, stdout: '' });
    expect(noFile.stderr).toMatch(/^recon ingest: no FILE given/);

    const unknownFlag = await ingest('--frobnicate', fixture('bad-rows.csv'));
    expect(unknownFlag.code).toBe(1);
    expect(unknownFlag.stderr).toMatch(/^recon ingest: .*--frobnicate/);

    const badZone = await ingest('--timezone', 'Mars/Olympus', fixture('bad-rows.csv'));
    expect(badZone.code).toBe(1);
    expect(badZone.stderr).toMatch(/^recon ingest: unknown time zone "Mars\/Olympus"/);

    const badEnvZone = await runReconInProcess(['ingest', fixture('bad-rows.csv')], {
      ...testDb.env,
      RECON_TIMEZONE: 'Nowhere/Land',
    });
    expect(badEnvZone.code).toBe(1);
    expect(badEnvZone.stderr.split('\n')).toHaveLength(2);
  });

  it('applies the size and ratio limits of the environment to each file', async () => {
    const withEnv = (env: Record<string, string>, ...files: string[]) =>
      runReconInProcess(['ingest', ...files], { ...testDb.env, ...env });

    const size = await variant(
      ['ingest', fixture('comma-quoted.csv')],
      { ...testDb.env, RECON_MAX_FILE_BYTES: '100' },
      2,
    );
    expect(size).toMatchObject({ code: 2, stderr: '' });
    expect(size.stdout).toMatch(
      /^fixtures\/comma-quoted\.csv: failed: \d+ bytes, more than the 100 allowed \(RECON_MAX_FILE_BYTES\)\n$/,
    );

    const total = await withEnv(
      { RECON_MAX_UNCOMPRESSED_BYTES: '1000' },
      fixture('single-member.csv.gz'),
      fixture('two-entries.zip'),
    );
    expect(total.code).toBe(2);
    expect(total.stdout).toBe(
      'fixtures/single-member.csv.gz: failed: decompresses to more than 1000 bytes (RECON_MAX_UNCOMPRESSED_BYTES)\n' +
        'fixtures/two-entries.zip: failed: decompresses to more than 1000 bytes (RECON_MAX_UNCOMPRESSED_BYTES)\n',
    );

    // The bombs inflate about 1000 times: refused at the default ratio, taken when the limit allows it.
    const bombs = await smallBombs(dir);
    const refused = await withEnv({}, ...bombs);
    expect(
      refused.stdout.split('\n').filter((line) => line.includes('failed: decompresses to more than 200 times')),
    ).toHaveLength(2);
    const allowed = await withEnv({ RECON_MAX_COMPRESSION_RATIO: '5000' }, ...bombs);
    expect(allowed).toMatchObject({ code: 0, stderr: '' });
    expect(allowed.stdout.split('\n')).toEqual([
      expect.stringMatching(/\/bomb\.csv\.gz: loaded rows=1 /),
      expect.stringMatching(/\/bomb\.zip: loaded rows=1 /),
      '',
    ]);
    expect(allowed.stdout.startsWith(`${bombs[0]}: `)).toBe(true);
  });

  it('warns on stderr about bytes after the last bzip2 stream, and loads the rows', async () => {
    // No bzip2 binary on PATH: the JavaScript decoder reads the file, and reports the bytes it ignored. A process of
    // its own: the lookup of the binary reads this process's PATH, once.
    const result = await runRecon(['ingest', fixture('trailing-garbage.csv.bz2')], {
      ...testDb.env,
      PATH: '',
    });
    expect(result).toEqual({
      code: 0,
      stdout: 'fixtures/trailing-garbage.csv.bz2: loaded rows=6 inserted=6 updated=0 unchanged=0 rejected=0\n',
      stderr: 'recon ingest: warning: fixtures/trailing-garbage.csv.bz2: bytes after the last bzip2 stream ignored\n',
    });
  });

  it('exits 1 with one line naming a malformed limit variable', async () => {
    const result = await runReconInProcess(['ingest', fixture('comma-quoted.csv')], {
      ...testDb.env,
      RECON_MAX_COMPRESSION_RATIO: 'lots',
    });
    expect(result).toMatchObject({ code: 1, stdout: '' });
    expect(result.stderr).toMatch(/^recon ingest: invalid environment variable RECON_MAX_COMPRESSION_RATIO: [^\n]*\n$/);
  });

  it('names the file once on the line of a failed file, then the entry or the reason', async () => {
    const result = await ingest(
      fixture('corrupt.zip'),
      fixture('no-such-file.csv'),
      'fixtures',
      fixture('unclosed-quote.csv'),
    );
    expect(result).toMatchObject({ code: 2, stderr: '' });
    expect(result.stdout.split('\n')).toEqual([
      'fixtures/corrupt.zip: failed: entry export.csv: corrupt entry (1259 bytes instead of the 1255 the directory declares)',
      'fixtures/no-such-file.csv: failed: cannot read the file (ENOENT: no such file or directory)',
      'fixtures: failed: not a regular file',
      'fixtures/unclosed-quote.csv: failed: line 4: a quote opened in the record starting here is never closed',
      '',
    ]);
  });

  it('describes itself with --help', async () => {
    const help = await ingest('--help');
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/^usage: recon ingest \[--json\] \[--timezone ZONE\] FILE\.\.\./);
    expect(help.stdout).toContain('exit codes');
  });
});

/**
 * The bomb fixtures' header and row over 4 MiB of empty lines instead of 50, gzipped and zipped alike: about as
 * many times smaller, past the 1 MiB below which no ratio is judged, at a tenth of the reading.
 */
async function smallBombs(dir: string): Promise<[string, string]> {
  // The fixture's first 2 KB hold its header, its row and thousands of empty lines; read without the rest.
  const start = gunzipSync((await readFile(fixture('bomb.csv.gz'))).subarray(0, 2048), {
    finishFlush: zlibConstants.Z_SYNC_FLUSH,
  });
  const csv = Buffer.concat([start.subarray(0, start.indexOf('\n\n') + 1), Buffer.alloc(4 * 1024 * 1024, '\n')]);
  const files: [string, string] = [path.join(dir, 'bomb.csv.gz'), path.join(dir, 'bomb.zip')];
  await writeFile(files[0], gzipSync(csv, { level: 9 }));
  await writeFile(files[1], writeZip([{ name: 'export.csv', data: csv, method: 'deflate', level: 9 }]));
  return files;
}
