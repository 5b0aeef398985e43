import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { gunzipSync, gzipSync } from 'node:zlib';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/config.ts';
import { findExecutable } from '../../src/decompress/find-executable.ts';
import { openExport, type OpenedExport, type OpenExportOptions } from '../../src/decompress/open-export.ts';
import { expectReconError } from '../support/expect-recon-error.ts';

const FIXTURES = path.join(import.meta.dirname, '..', '..', 'fixtures');
const fixture = (name: string) => path.join(FIXTURES, name);
const DEFAULT_LIMITS = loadConfig({}).limits;

const scratch = mkdtempSync(path.join(tmpdir(), 'recon-decompress-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const hasBzip2 = (await findExecutable(['lbzip2', 'bzip2'])) !== undefined;
const hasZipCli = (await findExecutable(['zip'])) !== undefined;

interface ReadEntry {
  name: string | null;
  label: string;
  text: string;
}

async function readAll(opened: OpenedExport): Promise<ReadEntry[]> {
  const entries: ReadEntry[] = [];
  for await (const entry of opened.entries) {
    const chunks: Buffer[] = [];
    for await (const chunk of await entry.open()) chunks.push(chunk as Buffer);
    entries.push({ name: entry.name, label: entry.label, text: Buffer.concat(chunks).toString('utf8') });
  }
  return entries;
}

async function readExport(filePath: string, limits = DEFAULT_LIMITS, options: OpenExportOptions = {}) {
  const opened = await openExport(filePath, limits, options);
  try {
    const entries = await readAll(opened);
    return { compression: opened.compression, sizeBytes: opened.sizeBytes, bytesRead: opened.bytesRead(), entries };
  } finally {
    await opened.close();
  }
}

const dataLines = (text: string) => text.split('\n').filter((line) => line !== '' && !line.startsWith('IDENTIFIER'));
const transactionIds = (text: string) => dataLines(text).map((line) => line.split(';')[2]);

describe('openExport: formats', () => {
  it('reads plain csv as one unnamed entry, byte for byte', async () => {
    const result = await readExport(fixture('semicolon-bom-crlf.csv'));
    expect(result.compression).toBe('none');
    expect(result.entries).toHaveLength(1);
    expect(result.entries[0]).toMatchObject({ name: null, label: fixture('semicolon-bom-crlf.csv') });
    expect(result.entries[0]!.text).toBe(readFileSync(fixture('semicolon-bom-crlf.csv'), 'utf8'));
  });

  it('detects gzip from the bytes under a .csv name', async () => {
    const result = await readExport(fixture('gzip-named-csv.csv'));
    expect(result.compression).toBe('gzip');
    expect(dataLines(result.entries[0]!.text)).toHaveLength(4);
  });

  it('reads every member of a multi-member gzip', async () => {
    const result = await readExport(fixture('multi-member.csv.gz'));
    expect(result.compression).toBe('gzip');
    expect(transactionIds(result.entries[0]!.text)).toEqual(Array.from({ length: 9 }, (_, i) => `A60000${i + 1}`));
  });

  it('reads a large multi-member gzip whole', async () => {
    const text = Array.from({ length: 60_000 }, (_, i) => `T${i};${'x'.repeat(i % 50)}\n`).join('');
    const bytes = Buffer.from(text);
    const cuts = [0, 400_000, 900_000, bytes.length];
    const members = cuts.slice(1).map((end, i) => gzipSync(bytes.subarray(cuts[i], end)));
    const file = path.join(scratch, 'large-multi-member.gz');
    writeFileSync(file, Buffer.concat(members));
    const result = await readExport(file);
    expect(result.entries[0]!.text).toBe(text);
  });

  it('reads a single-member gzip', async () => {
    const result = await readExport(fixture('single-member.csv.gz'));
    expect(result.entries[0]!.text).toBe(gunzipSync(readFileSync(fixture('single-member.csv.gz'))).toString('utf8'));
  });

  describe.each([
    ['native', hasBzip2],
    ['js', true],
  ] as const)('bzip2 with the %s decoder', (decoder, available) => {
    const options: OpenExportOptions = { bzip2Decoder: decoder };

    it.runIf(available)('reads a single stream', async () => {
      const result = await readExport(fixture('single-stream.csv.bz2'), DEFAULT_LIMITS, options);
      expect(result.compression).toBe('bzip2');
      expect(dataLines(result.entries[0]!.text)).toHaveLength(6);
    });

    it.runIf(available)('reads every stream of a multi-stream file', async () => {
      const result = await readExport(fixture('multi-stream.csv.bz2'), DEFAULT_LIMITS, options);
      expect(transactionIds(result.entries[0]!.text)).toEqual(Array.from({ length: 9 }, (_, i) => `A90000${i + 1}`));
    });

    it.runIf(available && hasBzip2)('reads a large multi-stream file whole (several blocks per stream)', async () => {
      const text = Array.from(
        { length: 120_000 },
        (_, i) => `T${i};${(i * 7919) % 100_003};${'y'.repeat(i % 30)}\n`,
      ).join('');
      const bytes = Buffer.from(text);
      const half = Math.floor(bytes.length / 2) + 17;
      const streams = [bytes.subarray(0, half), bytes.subarray(half)].map(
        (part) => spawnSync('bzip2', ['-1', '-c'], { input: part }).stdout,
      );
      const file = path.join(scratch, `large-multi-stream-${decoder}.bz2`);
      writeFileSync(file, Buffer.concat(streams));
      const result = await readExport(file, DEFAULT_LIMITS, options);
      expect(result.entries[0]!.text).toBe(text);
    });

    it.runIf(available)('fails a truncated file as ARCHIVE_CORRUPT naming it', async () => {
      await expectReconError(
        () => readExport(fixture('truncated.csv.bz2'), DEFAULT_LIMITS, options),
        'ARCHIVE_CORRUPT',
        fixture('truncated.csv.bz2'),
        'bzip2',
      );
    });

    it.runIf(available)('fails flipped bytes as ARCHIVE_CORRUPT naming the file', async () => {
      await expectReconError(
        () => readExport(fixture('corrupt.csv.bz2'), DEFAULT_LIMITS, options),
        'ARCHIVE_CORRUPT',
        fixture('corrupt.csv.bz2'),
        'bzip2',
      );
    });

    it.runIf(available)('fails a file cut right after its magic bytes', async () => {
      const file = path.join(scratch, `magic-only-${decoder}.bz2`);
      writeFileSync(file, 'BZh9');
      await expectReconError(() => readExport(file, DEFAULT_LIMITS, options), 'ARCHIVE_CORRUPT', file);
    });
  });

  it('reads a zip with one deflated entry', async () => {
    const result = await readExport(fixture('one-entry.zip'));
    expect(result.compression).toBe('zip');
    expect(result.entries.map((entry) => entry.name)).toEqual(['export.csv']);
    expect(result.entries[0]!.label).toBe(`${fixture('one-entry.zip')}: entry export.csv`);
    expect(dataLines(result.entries[0]!.text)).toHaveLength(6);
  });

  it('reads both csv entries of a zip and skips the directory and __MACOSX entries', async () => {
    const result = await readExport(fixture('two-entries.zip'));
    expect(result.entries.map((entry) => entry.name)).toEqual(['export/part-1.csv', 'export/part-2.csv']);
    expect(result.entries.map((entry) => dataLines(entry.text).length)).toEqual([4, 5]);
  });

  it('reads an entry written with a data descriptor', async () => {
    const bytes = readFileSync(fixture('data-descriptor.zip'));
    // The fixture really is one: bit 3 set and zero sizes in the local header.
    expect(bytes.readUInt16LE(6) & 0x08).toBe(0x08);
    expect(bytes.readUInt32LE(18)).toBe(0);
    const result = await readExport(fixture('data-descriptor.zip'));
    expect(dataLines(result.entries[0]!.text)).toHaveLength(6);
  });

  it.runIf(hasZipCli)('reads what the zip CLI writes from stdin (a data-descriptor entry named "-")', async () => {
    const file = path.join(scratch, 'from-stdin.zip');
    const csv = readFileSync(fixture('newer-export.csv'));
    const zipped = spawnSync('zip', ['-q', file, '-'], { input: csv });
    expect(zipped.status).toBe(0);
    const result = await readExport(file);
    expect(result.entries.map((entry) => entry.name)).toEqual(['-']);
    expect(result.entries[0]!.text).toBe(csv.toString('utf8'));
  });
});

describe('openExport: bytes read, for progress', () => {
  it.each([
    ['semicolon-bom-crlf.csv', {}],
    ['multi-member.csv.gz', {}],
    ['multi-stream.csv.bz2', { bzip2Decoder: 'js' }],
    ...(hasBzip2 ? [['multi-stream.csv.bz2', { bzip2Decoder: 'native' }] as const] : []),
  ] as const)('counts every compressed byte of %s once it is read (%o)', async (name, options) => {
    const result = await readExport(fixture(name), DEFAULT_LIMITS, options);
    expect(result.bytesRead).toBe(result.sizeBytes);
  });

  it("counts a zip's entry data, not its directory", async () => {
    const result = await readExport(fixture('two-entries.zip'));
    expect(result.bytesRead).toBeGreaterThan(0);
    expect(result.bytesRead).toBeLessThan(result.sizeBytes);
  });

  it('grows while a large file is read, before its end', async () => {
    const file = path.join(scratch, 'progress.csv.gz');
    writeFileSync(
      file,
      gzipSync(Array.from({ length: 300_000 }, (_, i) => `T${i};${(i * 7919) % 100_003}\n`).join('')),
    );
    const opened = await openExport(file, DEFAULT_LIMITS);
    try {
      const seen: number[] = [];
      for await (const entry of opened.entries) {
        for await (const _chunk of await entry.open()) seen.push(opened.bytesRead());
      }
      expect(seen[0]).toBeGreaterThan(0);
      expect(seen[0]).toBeLessThan(opened.sizeBytes);
      expect(seen).toEqual([...seen].sort((x, y) => x - y));
      expect(opened.bytesRead()).toBe(opened.sizeBytes);
    } finally {
      await opened.close();
    }
  });
});

describe('openExport: broken files', () => {
  it.each([
    ['empty.csv', 'FILE_EMPTY'],
    ['truncated.csv.gz', 'ARCHIVE_CORRUPT'],
    ['truncated.zip', 'ARCHIVE_CORRUPT'],
    ['empty.zip', 'ARCHIVE_EMPTY'],
    ['no-csv-entry.zip', 'ARCHIVE_EMPTY'],
  ] as const)('%s fails with %s naming the file', async (name, code) => {
    await expectReconError(() => readExport(fixture(name)), code, fixture(name));
  });

  it('fails a zip entry whose data was altered, naming the entry', async () => {
    await expectReconError(
      () => readExport(fixture('corrupt.zip')),
      'ARCHIVE_CORRUPT',
      `${fixture('corrupt.zip')}: entry export.csv`,
    );
  });

  it('fails a stored entry with one flipped byte on its crc-32', async () => {
    const file = path.join(scratch, 'flipped-stored.zip');
    const bytes = Buffer.from(readFileSync(fixture('two-entries.zip')));
    // export/part-1.csv is stored: its data starts after the directory entry 'export/' and its own local header.
    const dataStart = 30 + 'export/'.length + 30 + 'export/part-1.csv'.length;
    bytes[dataStart + 40] = bytes[dataStart + 40]! ^ 0x01;
    writeFileSync(file, bytes);
    await expectReconError(() => readExport(file), 'ARCHIVE_CORRUPT', 'export/part-1.csv', 'crc-32');
  });

  it('fails a zip holding two csv entries of the same name, before reading either', async () => {
    const message = await expectReconError(
      () => openExport(fixture('duplicate-entry.zip'), DEFAULT_LIMITS),
      'ARCHIVE_CORRUPT',
      `${fixture('duplicate-entry.zip')}: entry export.csv`,
    );
    expect(message).toMatch(/two entries/);
  });

  it('fails an encrypted entry with ARCHIVE_ENCRYPTED, naming the entry, before reading anything', async () => {
    await expectReconError(
      () => openExport(fixture('encrypted.zip'), DEFAULT_LIMITS),
      'ARCHIVE_ENCRYPTED',
      `${fixture('encrypted.zip')}: entry export.csv`,
    );
  });

  it('fails a missing file and a directory as FILE_UNREADABLE', async () => {
    await expectReconError(
      () => openExport(path.join(scratch, 'nope.csv'), DEFAULT_LIMITS),
      'FILE_UNREADABLE',
      path.join(scratch, 'nope.csv'),
    );
    await expectReconError(() => openExport(scratch, DEFAULT_LIMITS), 'FILE_UNREADABLE', scratch);
  });
});

describe('openExport: limits', () => {
  it('rejects the zip bomb from its directory, before inflating', async () => {
    await expectReconError(
      () => openExport(fixture('bomb.zip'), DEFAULT_LIMITS),
      'LIMIT_EXCEEDED',
      fixture('bomb.zip'),
      'RECON_MAX_COMPRESSION_RATIO',
    );
  });

  it('stops a zip bomb whose directory understates its size while inflating it', async () => {
    const file = path.join(scratch, 'lying-bomb.zip');
    const bytes = Buffer.from(readFileSync(fixture('bomb.zip')));
    const directory = bytes.indexOf(Buffer.from([0x50, 0x4b, 0x01, 0x02]));
    // Uncompressed size in the central directory: claim 60 KB instead of 50 MiB.
    bytes.writeUInt32LE(60_000, directory + 24);
    writeFileSync(file, bytes);
    const opened = await openExport(file, DEFAULT_LIMITS);
    // LIMIT_EXCEEDED, not the size mismatch the crc check would report at the end: the stream stopped early.
    await expectReconError(() => readAll(opened), 'LIMIT_EXCEEDED', file, 'RECON_MAX_COMPRESSION_RATIO');
  });

  it('stops the gzip bomb while inflating it', async () => {
    await expectReconError(
      () => readExport(fixture('bomb.csv.gz')),
      'LIMIT_EXCEEDED',
      fixture('bomb.csv.gz'),
      'RECON_MAX_COMPRESSION_RATIO',
    );
  });

  it('does not judge the ratio of small files', async () => {
    const result = await readExport(fixture('single-member.csv.gz'), { ...DEFAULT_LIMITS, maxCompressionRatio: 1 });
    expect(dataLines(result.entries[0]!.text)).toHaveLength(6);
  });

  it('enforces the total of decompressed bytes across zip entries', async () => {
    const limits = { ...DEFAULT_LIMITS, maxUncompressedBytes: 1500 };
    await expectReconError(
      () => openExport(fixture('two-entries.zip'), limits),
      'LIMIT_EXCEEDED',
      'RECON_MAX_UNCOMPRESSED_BYTES',
    );
    await expectReconError(
      () => readExport(fixture('single-member.csv.gz'), { ...DEFAULT_LIMITS, maxUncompressedBytes: 500 }),
      'LIMIT_EXCEEDED',
      'RECON_MAX_UNCOMPRESSED_BYTES',
    );
  });

  it('rejects a file above the size limit before opening it', async () => {
    await expectReconError(
      () => openExport(fixture('semicolon-bom-crlf.csv'), { ...DEFAULT_LIMITS, maxFileBytes: 100 }),
      'LIMIT_EXCEEDED',
      'RECON_MAX_FILE_BYTES',
    );
  });
});

describe.runIf(hasBzip2)('openExport: early stop', () => {
  it.each(['native', 'js'] as const)('close() ends a %s bzip2 stream that is still being read', async (decoder) => {
    const file = path.join(scratch, `big-${decoder}.bz2`);
    const text = Array.from({ length: 200_000 }, (_, i) => `T${i};${(i * 104_729) % 999_983}\n`).join('');
    writeFileSync(file, spawnSync('bzip2', ['-1', '-c'], { input: text }).stdout);
    const opened = await openExport(file, DEFAULT_LIMITS, { bzip2Decoder: decoder });
    let stream: Readable | undefined;
    for await (const entry of opened.entries) stream ??= await entry.open();
    if (stream === undefined) throw new Error('no entry');
    const closed = new Promise((resolve) => stream.once('close', resolve));
    let chunks = 0;
    await expect(async () => {
      for await (const chunk of stream) {
        chunks += (chunk as Buffer).length > 0 ? 1 : 0;
        await opened.close();
      }
    }).rejects.toThrow(/premature close/i);
    await closed;
    expect(chunks).toBe(1);
  });
});
