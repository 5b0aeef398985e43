import { spawnSync } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ingestFiles } from '../../pipelines/ingest-files.ts';
import { loadConfig } from '../../src/config/config.ts';
import { findExecutable } from '../../src/decompress/find-executable.ts';
import { BACKENDS, createTestDatabase, hasPostgres, type TestDatabase } from '../support/test-database.ts';
import { waitUntil } from '../support/wait-until.ts';

const NATIVE_BZIP2 = /^l?bzip2$/;
const hasBzip2 = (await findExecutable(['lbzip2', 'bzip2'])) !== undefined;

/**
 * A header, 2,000 rows (two of the parser's batches, so progress is reported before the limit is hit) and
 * 32 MiB of empty lines: bzip2 packs it in a few KB.
 */
function bzip2Bomb(): Buffer {
  let rows = 'TRANSACTIONID;DATE;AMOUNT;CURRENCY\n';
  for (let n = 1; n <= 2000; n++) rows += `BOMB${n};2024-05-01 12:00:00;1.00;EUR\n`;
  const csv = Buffer.concat([Buffer.from(rows), Buffer.alloc(32 * 1024 * 1024, '\n')]);
  const compressed = spawnSync('bzip2', ['-9', '-c'], { input: csv, maxBuffer: 1024 * 1024 });
  if (compressed.status !== 0) throw new Error(`bzip2 failed: ${compressed.stderr.toString()}`);
  return compressed.stdout;
}

/** The pids of the native bzip2 decompressors this process has started and not yet reaped. */
function bzip2Children(): number[] {
  const listed = spawnSync('pgrep', ['-P', String(process.pid), '-l'], { encoding: 'utf8' });
  return listed.stdout
    .split('\n')
    .map((line) => line.trim().split(/\s+/))
    .filter(([pid, name]) => pid !== undefined && name !== undefined && NATIVE_BZIP2.test(name))
    .map(([pid]) => Number(pid));
}

const running = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

describe.each(BACKENDS)('a bzip2 bomb on %s', (backend) => {
  const skip = (backend === 'postgres' && !hasPostgres) || !hasBzip2;
  let testDb: TestDatabase;
  let tmp: string;
  beforeAll(async () => {
    if (skip) return;
    testDb = await createTestDatabase(backend);
    tmp = await mkdtemp(path.join(os.tmpdir(), 'recon-bz-bomb-'));
  });
  afterAll(async () => {
    await testDb?.drop();
    if (tmp) await rm(tmp, { recursive: true, force: true });
  });

  it.skipIf(skip).each([
    {
      limit: 'RECON_MAX_COMPRESSION_RATIO',
      env: {},
      message: /: decompresses to more than 200 times its \d+ bytes \(a zip bomb\? RECON_MAX_COMPRESSION_RATIO\)$/,
    },
    {
      limit: 'RECON_MAX_UNCOMPRESSED_BYTES',
      env: { RECON_MAX_UNCOMPRESSED_BYTES: '4000000', RECON_MAX_COMPRESSION_RATIO: '1000000' },
      message: /: decompresses to more than 4000000 bytes \(RECON_MAX_UNCOMPRESSED_BYTES\)$/,
    },
  ])(
    'past $limit: fails with LIMIT_EXCEEDED naming the file, its native decompressor does not outlive it, nothing loads',
    async ({ limit, env, message }) => {
      const file = path.join(tmp, `${limit}.csv.bz2`);
      await writeFile(file, bzip2Bomb());
      expect(bzip2Children()).toEqual([]);

      // Progress is reported while the decompressor still has megabytes to write: it is alive then.
      const seen = new Set<number>();
      const [result] = await ingestFiles(testDb.database, [file], {
        timezone: 'UTC',
        limits: loadConfig(env).limits,
        onProgress: () => bzip2Children().forEach((pid) => seen.add(pid)),
      });

      expect(result).toMatchObject({ file, status: 'failed', compression: 'bzip2', errorCode: 'LIMIT_EXCEEDED' });
      const error = result!.status === 'failed' ? result!.error : '';
      expect(error.startsWith(`${file}: `)).toBe(true);
      expect(error).toMatch(message);
      expect(seen.size).toBe(1);
      // Killed, or ended by the pipe its output went to being closed: either way it must be gone.
      const [pid] = seen;
      await waitUntil(`bzip2 ${pid} to be gone`, () => !running(pid!), { timeoutMs: 5_000 });
      expect(bzip2Children()).toEqual([]);

      const files = await testDb.database.db
        .selectFrom('recon.files')
        .select(['status', 'error_code'])
        .where('name', '=', file)
        .execute();
      expect(files).toEqual([{ status: 'failed', error_code: 'LIMIT_EXCEEDED' }]);
      const rows = await testDb.database.db.selectFrom('recon.transactions').select('transaction_id').execute();
      expect(rows).toEqual([]);
    },
  );
});
