import { spawnSync } from 'node:child_process';
import { Readable } from 'node:stream';
import { gunzipSync } from 'node:zlib';
import unzipper from 'unzipper';
import { describe, expect, it } from 'vitest';
import { compressExport } from '../../src/export/compress.ts';

const csv = Buffer.from('ORDERID;AMOUNT;"BILLINGFEES INCL. VAT"\nCMD-é;150.00;3.90\n'.repeat(200), 'utf8');
const at = new Date('2026-05-04T10:20:30Z');

describe('compressExport', () => {
  it('without COMPRESSION sends the csv as is', async () => {
    const file = await compressExport('transactions.csv', csv, undefined, at);
    expect(file).toEqual({ filename: 'transactions.csv', contentType: 'text/csv; charset=utf-8', bytes: csv });
  });

  it('zip: a real archive with the csv as its one entry', async () => {
    const file = await compressExport('transactions.csv', csv, 'zip', at);
    expect(file.filename).toBe('transactions.csv.zip');
    expect(file.contentType).toBe('application/zip');
    expect(file.bytes.length).toBeLessThan(csv.length);

    const directory = await unzipper.Open.buffer(file.bytes);
    expect(directory.files.map((entry) => entry.path)).toEqual(['transactions.csv']);
    const entry = directory.files[0]!;
    expect(await entry.buffer()).toEqual(csv);
    expect(entry.lastModifiedDateTime.getTime()).toBe(new Date(2026, 4, 4, 10, 20, 30).getTime());
  });

  it('zip: readable by a streaming reader too (sizes in the local header)', async () => {
    const file = await compressExport('transactions.csv', csv, 'zip', at);
    const entries: Buffer[] = [];
    await Readable.from([file.bytes])
      .pipe(unzipper.Parse())
      .on('entry', (entry: unzipper.Entry) => void entry.buffer().then((content) => entries.push(content)))
      .promise();
    expect(entries).toEqual([csv]);
  });

  it('gzip: gunzips back to the csv', async () => {
    const file = await compressExport('transactions.csv', csv, 'gzip', at);
    expect(file).toMatchObject({ filename: 'transactions.csv.gz', contentType: 'application/gzip' });
    expect(gunzipSync(file.bytes)).toEqual(csv);
  });

  it('bzip: bzip2 data that bzip2 -d turns back into the csv', async () => {
    const file = await compressExport('transactions.csv', csv, 'bzip', at);
    expect(file).toMatchObject({ filename: 'transactions.csv.bz2', contentType: 'application/x-bzip2' });
    expect(file.bytes.subarray(0, 3).toString('latin1')).toBe('BZh');
    const decompressed = spawnSync('bzip2', ['-d', '-c'], { input: file.bytes });
    expect(decompressed.status).toBe(0);
    expect(decompressed.stdout).toEqual(csv);
  });

  it('bzip: says clearly when bzip2 is not on PATH', async () => {
    const path = process.env.PATH;
    process.env.PATH = '/nonexistent';
    try {
      await expect(compressExport('transactions.csv', csv, 'bzip', at)).rejects.toThrow(
        /needs the bzip2 program on PATH/,
      );
    } finally {
      process.env.PATH = path;
    }
  });
});
