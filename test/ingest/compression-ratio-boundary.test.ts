import { mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ingestFiles } from '../../pipelines/ingest-files.ts';
import { loadConfig } from '../../src/config/config.ts';
import { RATIO_CHECK_FLOOR_BYTES } from '../../src/decompress/decompressed-byte-budget.ts';
import { BACKENDS, createTestDatabase, hasPostgres, type TestDatabase } from '../support/test-database.ts';

const RATIO = 100;
const limits = loadConfig({ RECON_MAX_COMPRESSION_RATIO: String(RATIO) }).limits;

/** The TRANSACTIONID prefix of a test file's rows, from its name. */
const idPrefix = (name: string) => name.replace(/\W/g, '').toUpperCase().slice(0, 8);

/** Header flag FCOMMENT: a zero-terminated comment follows the 10-byte header (RFC 1952). */
const FCOMMENT = 0x10;

/**
 * A gzip export of exactly `compressedBytes` bytes that inflates to exactly `decompressedBytes`: two rows,
 * then empty lines up to the size, with a header comment padding the compressed size to the byte.
 */
function gzipOfSizes(prefix: string, decompressedBytes: number, compressedBytes: number): Buffer {
  const rows = `TRANSACTIONID;DATE;AMOUNT;CURRENCY\n${prefix}1;2024-05-01 12:00:00;1.00;EUR\n${prefix}2;2024-05-01 12:00:01;2.00;EUR\n`;
  const csv = Buffer.concat([Buffer.from(rows), Buffer.alloc(decompressedBytes - rows.length, '\n')]);
  const plain = gzipSync(csv);
  const comment = Buffer.alloc(compressedBytes - plain.length - 1, 'c');
  const header = Buffer.from(plain.subarray(0, 10));
  header[3]! |= FCOMMENT;
  const padded = Buffer.concat([header, comment, Buffer.from([0]), plain.subarray(10)]);
  if (padded.length !== compressedBytes) throw new Error(`padded to ${padded.length}, not ${compressedBytes}`);
  return padded;
}

describe.each(BACKENDS)('RECON_MAX_COMPRESSION_RATIO at its boundary on %s', (backend) => {
  const skip = backend === 'postgres' && !hasPostgres;
  let testDb: TestDatabase;
  let tmp: string;
  beforeAll(async () => {
    if (skip) return;
    testDb = await createTestDatabase(backend);
    tmp = await mkdtemp(path.join(os.tmpdir(), 'recon-ratio-'));
  });
  afterAll(async () => {
    await testDb?.drop();
    if (tmp) await rm(tmp, { recursive: true, force: true });
  });

  // Past the 1 MiB below which the ratio is not judged, and a whole multiple of the ratio.
  const compressed = 11_000;
  const decompressed = RATIO * compressed;

  async function ingestGzip(name: string, decompressedBytes: number, compressedBytes: number) {
    const file = path.join(tmp, name);
    await writeFile(file, gzipOfSizes(idPrefix(name), decompressedBytes, compressedBytes));
    expect((await stat(file)).size).toBe(compressedBytes);
    const [result] = await ingestFiles(testDb.database, [file], { timezone: 'UTC', limits });
    return { file, result: result! };
  }

  it.skipIf(skip)('loads a file that inflates exactly RATIO times its size', async () => {
    expect(decompressed).toBeGreaterThan(RATIO_CHECK_FLOOR_BYTES);
    const { result } = await ingestGzip('exact.csv.gz', decompressed, compressed);
    expect(result).toMatchObject({ status: 'loaded', compression: 'gzip', rows: 2, inserted: 2 });
  });

  it.skipIf(skip)('refuses one byte more inflated, or one byte less compressed, naming the file', async () => {
    for (const [name, decompressedBytes, compressedBytes] of [
      ['inflated-byte-more.csv.gz', decompressed + 1, compressed],
      ['compressed-byte-less.csv.gz', decompressed, compressed - 1],
    ] as const) {
      const { file, result } = await ingestGzip(name, decompressedBytes, compressedBytes);
      expect(result).toMatchObject({ status: 'failed', errorCode: 'LIMIT_EXCEEDED' });
      expect(result.status === 'failed' && result.error).toBe(
        `${file}: decompresses to more than ${RATIO} times its ${compressedBytes} bytes (a zip bomb? RECON_MAX_COMPRESSION_RATIO)`,
      );
      const loaded = await testDb.database.db
        .selectFrom('recon.transactions')
        .select('transaction_id')
        .where('transaction_id', 'like', `${idPrefix(name)}%`)
        .execute();
      expect(loaded).toEqual([]);
    }
  });
});
