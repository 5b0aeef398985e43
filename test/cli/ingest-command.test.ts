import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKENDS, createTestDatabase, hasPostgres, type TestDatabase } from '../support/test-database.ts';
import { runRecon } from './run-recon.ts';

const fixture = (name: string) => path.join('fixtures', name);

describe.each(BACKENDS)('recon ingest on %s', (backend) => {
  const skip = backend === 'postgres' && !hasPostgres;
  let testDb: TestDatabase;
  beforeAll(async () => {
    if (skip) return;
    testDb = await createTestDatabase(backend);
    // A PGlite directory is opened by one process at a time: the CLI's, while it runs.
    await testDb.close();
  });
  afterAll(async () => testDb?.drop());

  const ingest = (...args: string[]) => runRecon(['ingest', ...args], testDb.env);

  it.skipIf(skip)('prints a summary line per file and exits 0 when every file loads without rejected rows', async () => {
    const result = await ingest(fixture('semicolon-bom-crlf.csv'), fixture('two-entries.zip'));
    expect(result).toEqual({
      code: 0,
      stdout:
        'fixtures/semicolon-bom-crlf.csv: loaded rows=10 inserted=10 updated=0 unchanged=0 rejected=0\n' +
        'fixtures/two-entries.zip: loaded rows=9 inserted=9 updated=0 unchanged=0 rejected=0\n',
      stderr: '',
    });
  });

  it.skipIf(skip)('prints one JSON object per file with --json; duplicates still exit 0', async () => {
    const result = await ingest('--json', fixture('semicolon-bom-crlf.csv'), fixture('newer-export.csv'));
    expect(result.code).toBe(0);
    const lines = result.stdout.trimEnd().split('\n').map((line) => JSON.parse(line));
    expect(lines).toEqual([
      expect.objectContaining({ file: 'fixtures/semicolon-bom-crlf.csv', status: 'duplicate', fileId: '1', compression: 'none', rows: null }),
      expect.objectContaining({ file: 'fixtures/newer-export.csv', status: 'loaded', rows: 10, inserted: 0, updated: 3, unchanged: 7, rejected: 0, error: null }),
    ]);
  });

  it.skipIf(skip)('exits 3 when rows were rejected', async () => {
    const result = await ingest('--json', fixture('bad-rows.csv'));
    expect(result.code).toBe(3);
    expect(JSON.parse(result.stdout)).toMatchObject({ status: 'loaded', rows: 13, inserted: 6, rejected: 7 });
  });

  it.skipIf(skip)('exits 2 when a file failed, after loading the others', async () => {
    const result = await ingest(fixture('truncated.csv.gz'), fixture('comma-quoted.csv'), fixture('bad-rows.csv'));
    expect(result.code).toBe(2);
    expect(result.stdout.split('\n')).toEqual([
      expect.stringMatching(/^fixtures\/truncated\.csv\.gz: failed: .*gzip/),
      'fixtures/comma-quoted.csv: loaded rows=8 inserted=8 updated=0 unchanged=0 rejected=0',
      'fixtures/bad-rows.csv: duplicate of file 4, nothing changed',
      '',
    ]);
    expect(result.stderr).toBe('');

    const database = await testDb.reopen();
    try {
      const files = await database.db.selectFrom('recon.files').select(['status', 'error_code']).orderBy('file_id').execute();
      expect(files.map((file) => `${file.status}:${file.error_code ?? ''}`)).toEqual([
        'loaded:', 'loaded:', 'loaded:', 'loaded:', 'failed:ARCHIVE_CORRUPT', 'loaded:',
      ]);
    } finally {
      await testDb.close();
    }
  });
});

describe('recon ingest usage', () => {
  let dataDir: string;
  beforeAll(async () => {
    dataDir = await mkdtemp(path.join(os.tmpdir(), 'recon-cli-'));
  });
  afterAll(async () => rm(dataDir, { recursive: true, force: true }));

  const ingest = (...args: string[]) => runRecon(['ingest', ...args], { RECON_DATA_DIR: dataDir });

  it('exits 1 without a file, with an unknown option, or with an unknown zone', async () => {
    const noFile = await ingest();
    expect(noFile).toMatchObject({ code: 1, stdout: '' });
    expect(noFile.stderr).toMatch(/^recon ingest: no FILE given/);

    const unknownFlag = await ingest('--frobnicate', fixture('bad-rows.csv'));
    expect(unknownFlag.code).toBe(1);
    expect(unknownFlag.stderr).toMatch(/^recon ingest: .*--frobnicate/);

    const badZone = await ingest('--timezone', 'Mars/Olympus', fixture('bad-rows.csv'));
    expect(badZone.code).toBe(1);
    expect(badZone.stderr).toMatch(/^recon ingest: unknown time zone "Mars\/Olympus"/);

    const badEnvZone = await runRecon(['ingest', fixture('bad-rows.csv')], { RECON_DATA_DIR: dataDir, RECON_TIMEZONE: 'Nowhere/Land' });
    expect(badEnvZone.code).toBe(1);
    expect(badEnvZone.stderr.split('\n')).toHaveLength(2);
  });

  it('names the file once on the line of a failed file, then the entry or the reason', async () => {
    const result = await ingest(fixture('corrupt.zip'), fixture('no-such-file.csv'), 'fixtures', fixture('unclosed-quote.csv'));
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
