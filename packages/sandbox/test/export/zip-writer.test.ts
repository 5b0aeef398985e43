import unzipper from 'unzipper';
import { describe, expect, it } from 'vitest';
import { writeZip, type ZipEntry } from '../../src/export/zip-writer.ts';

const entries: ZipEntry[] = [
  { name: 'export.csv', data: Buffer.from('A;B\n1;2\n'.repeat(50)), method: 'deflate' },
  { name: 'notes/', method: 'stored' },
  { name: 'notes/readme.txt', data: Buffer.from('stored, with a data descriptor'), dataDescriptor: true },
];

/** What an independent reader finds in an archive: each entry's name and content. */
async function readBack(zip: Buffer): Promise<[string, string][]> {
  const directory = await unzipper.Open.buffer(zip);
  return Promise.all(
    directory.files.map(async (file): Promise<[string, string]> => [file.path, (await file.buffer()).toString()]),
  );
}

const expected: [string, string][] = [
  ['export.csv', 'A;B\n1;2\n'.repeat(50)],
  ['notes/', ''],
  ['notes/readme.txt', 'stored, with a data descriptor'],
];

describe('writeZip', () => {
  it('writes a zip32 archive an independent reader reads back', async () => {
    const zip = writeZip(entries);
    expect(zip.readUInt32LE(zip.length - 22)).toBe(0x06054b50);
    expect(zip.readUInt16LE(zip.length - 22 + 10)).toBe(3);
    expect(await readBack(zip)).toEqual(expected);
  });

  it.each([false, true])(
    'writes the zip64 form (extra fields: %s): saturated end record, zip64 record and locator, the same entries',
    async (extraFields) => {
      const zip32 = writeZip(entries);
      const zip = writeZip(entries, { zip64: { extraFields } });
      const end = zip.length - 22;
      expect(zip.readUInt32LE(end)).toBe(0x06054b50);
      expect([zip.readUInt16LE(end + 10), zip.readUInt32LE(end + 12), zip.readUInt32LE(end + 16)]).toEqual([
        0xffff, 0xffffffff, 0xffffffff,
      ]);
      const locator = end - 20;
      expect(zip.readUInt32LE(locator)).toBe(0x07064b50);
      const record = Number(zip.readBigUInt64LE(locator + 8));
      expect(record).toBe(locator - 56);
      expect(zip.readUInt32LE(record)).toBe(0x06064b50);
      expect(zip.readBigUInt64LE(record + 32)).toBe(3n);
      const directoryOffset = Number(zip.readBigUInt64LE(record + 48));
      // The entries' data is where the zip32 form has it; only the directory differs.
      expect(zip.subarray(0, directoryOffset)).toEqual(zip32.subarray(0, directoryOffset));
      const firstHeader = zip.subarray(directoryOffset, directoryOffset + 46);
      expect(firstHeader.readUInt32LE(20)).toBe(extraFields ? 0xffffffff : zip32.readUInt32LE(directoryOffset + 20));
      expect(firstHeader.readUInt16LE(30)).toBe(extraFields ? 28 : 0);
      expect(await readBack(zip)).toEqual(expected);
    },
  );
});
