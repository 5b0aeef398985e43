import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { zipArchive } from '../../scripts/zip-archive.ts';
import { loadConfig } from '../../src/config/config.ts';
import { openExport } from '../../src/decompress/open-export.ts';
import { expectReconError } from '../support/expect-recon-error.ts';
import { writeManyEntriesZip } from '../support/many-entries-zip.ts';
import { CENTRAL_FIELDS, END_FIELDS, zipLayout } from '../support/zip-layout.ts';

const FIXTURES = path.join(import.meta.dirname, '..', '..', 'fixtures');
const fixture = (name: string) => path.join(FIXTURES, name);
const LIMITS = loadConfig({}).limits;

const scratch = mkdtempSync(path.join(tmpdir(), 'recon-zip-bounds-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** A copy of `fixtureName` with `edit` applied to its bytes, written to the scratch folder. */
function edited(fixtureName: string, name: string, edit: (bytes: Buffer) => void): string {
  const bytes = Buffer.from(readFileSync(fixture(fixtureName)));
  edit(bytes);
  const file = path.join(scratch, name);
  writeFileSync(file, bytes);
  return file;
}

describe('zip end records, checked before the directory is read', () => {
  it('refuses the 205-byte zip whose directory lies past 2^63 in one line', async () => {
    expect(statSync(fixture('directory-past-end.zip')).size).toBe(205);
    const message = await expectReconError(
      () => openExport(fixture('directory-past-end.zip'), LIMITS),
      'ARCHIVE_CORRUPT',
      fixture('directory-past-end.zip'),
    );
    expect(message).toMatch(/past the end of the file/);
  });

  it('refuses a zip32 directory whose size runs past the end records', async () => {
    const file = edited('one-entry.zip', 'directory-size-past-end.zip', (bytes) => {
      bytes.writeUInt32LE(0x7fff_0000, zipLayout(bytes).end + END_FIELDS.directorySize);
    });
    await expectReconError(() => openExport(file, LIMITS), 'ARCHIVE_CORRUPT', file, 'central directory');
  });

  it('reads a zip followed by bytes that are not its own, and warns about them', async () => {
    const file = path.join(scratch, 'padded.zip');
    writeFileSync(file, Buffer.concat([readFileSync(fixture('one-entry.zip')), Buffer.from('\r\n--boundary--\r\n')]));
    const warnings: string[] = [];
    const opened = await openExport(file, LIMITS, { onWarning: (warning) => warnings.push(warning) });
    const names: (string | null)[] = [];
    for await (const entry of opened.entries) names.push(entry.name);
    expect(names).toEqual(['export.csv']);
    expect(warnings).toEqual([`${file}: 16 bytes after the end of the zip archive ignored`]);
  });

  it('reads the zip64 fixture', async () => {
    const opened = await openExport(fixture('zip64.zip'), LIMITS);
    const names: (string | null)[] = [];
    for await (const entry of opened.entries) names.push(entry.name);
    expect(names).toEqual(['export.csv']);
  });
});

describe('RECON_MAX_ZIP_ENTRIES', () => {
  it('defaults to 10,000 and is read from the environment', () => {
    expect(LIMITS.maxZipEntries).toBe(10_000);
    expect(loadConfig({ RECON_MAX_ZIP_ENTRIES: '25' }).limits.maxZipEntries).toBe(25);
  });

  it('accepts a zip of exactly the allowed number of entries and refuses one more, in one line', async () => {
    const limits = { ...LIMITS, maxZipEntries: 50 };
    const atLimit = path.join(scratch, 'fifty.zip');
    await writeManyEntriesZip(atLimit, 50);
    const opened = await openExport(atLimit, limits);
    let count = 0;
    for await (const _entry of opened.entries) count++;
    expect(count).toBe(50);

    const overLimit = path.join(scratch, 'fifty-one.zip');
    await writeManyEntriesZip(overLimit, 51);
    const message = await expectReconError(
      () => openExport(overLimit, limits),
      'LIMIT_EXCEEDED',
      overLimit,
      'RECON_MAX_ZIP_ENTRIES',
    );
    expect(message).toBe(`${overLimit}: the zip declares 51 entries, more than the 50 allowed (RECON_MAX_ZIP_ENTRIES)`);
  });

  it('refuses 100,001 entries in zip64 form with the default limit', async () => {
    const file = path.join(scratch, 'many.zip');
    await writeManyEntriesZip(file, 100_001);
    await expectReconError(() => openExport(file, LIMITS), 'LIMIT_EXCEEDED', file, 'RECON_MAX_ZIP_ENTRIES');
  });

  it('refuses a directory larger than 1 KiB per allowed entry', async () => {
    const file = path.join(scratch, 'long-name.zip');
    writeFileSync(
      file,
      zipArchive([{ name: `${'n'.repeat(3000)}.csv`, data: Buffer.from('A;B\n'), method: 'stored' }]),
    );
    await expectReconError(
      () => openExport(file, { ...LIMITS, maxZipEntries: 2 }),
      'LIMIT_EXCEEDED',
      file,
      'RECON_MAX_ZIP_ENTRIES',
    );
  });
});

describe('zip entries, checked against the directory before anything is read', () => {
  it('refuses an entry whose local header lies past the end of the file', async () => {
    const file = edited('one-entry.zip', 'local-header-past-end.zip', (bytes) => {
      bytes.writeUInt32LE(0x7fff_0000, zipLayout(bytes).centralHeaders[0]! + CENTRAL_FIELDS.localHeaderOffset);
    });
    await expectReconError(() => openExport(file, LIMITS), 'ARCHIVE_CORRUPT', `${file}: entry export.csv`);
  });

  it('refuses a zip64 entry whose local header lies past 2^63', async () => {
    const file = edited('zip64.zip', 'zip64-local-header-past-end.zip', (bytes) => {
      // The zip64 extra field holds the uncompressed size, the compressed size, then the local header offset.
      bytes.writeBigUInt64LE(2n ** 63n + 5n, zipLayout(bytes).zip64Extras[0]! + 16);
    });
    await expectReconError(() => openExport(file, LIMITS), 'ARCHIVE_CORRUPT', file);
  });

  it('refuses an entry whose compressed data would run into the directory', async () => {
    const file = edited('one-entry.zip', 'data-past-directory.zip', (bytes) => {
      bytes.writeUInt32LE(bytes.length, zipLayout(bytes).centralHeaders[0]! + CENTRAL_FIELDS.compressedSize);
    });
    await expectReconError(() => openExport(file, LIMITS), 'ARCHIVE_CORRUPT', `${file}: entry export.csv`);
  });

  it('names an entry with a line break in its name on one line', async () => {
    const file = path.join(scratch, 'line-break.zip');
    writeFileSync(
      file,
      zipArchive([{ name: 'export\n.csv', data: Buffer.from('x'), method: 'stored' }], {
        zip64: { extraFields: false },
      }),
    );
    const opened = await openExport(file, LIMITS);
    for await (const entry of opened.entries) expect(entry.label).toBe(`${file}: entry export\\x0a.csv`);
  });
});
