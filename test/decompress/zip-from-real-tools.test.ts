import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { text } from 'node:stream/consumers';
import { crc32 } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ingestFiles } from '../../pipelines/ingest-files.ts';
import { loadConfig } from '../../src/config/config.ts';
import { openExport } from '../../src/decompress/open-export.ts';
import { expectReconError } from '../support/expect-recon-error.ts';
import { BACKENDS, createTestDatabase, hasPostgres, type TestDatabase } from '../support/test-database.ts';
import { zipLayout } from '../support/zip-layout.ts';

const LIMITS = loadConfig({}).limits;
const UTF8_FLAG = 0x800;
const DATA_DESCRIPTOR_FLAG = 0x8;

const scratch = mkdtempSync(path.join(tmpdir(), 'recon-zip-tools-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

interface HandEntry {
  /** The name's bytes as the tool wrote them. */
  readonly name: Buffer;
  readonly data: Buffer;
  /** General purpose flags of both headers; data descriptor: zeros in the local header, the descriptor after. */
  readonly flags?: number;
  /** The central header's extra field. */
  readonly extra?: Buffer;
  /** The central header's comment. */
  readonly comment?: Buffer;
}

interface HandTrailer {
  /** Written between the directory and the end record (a zip64 end record and its locator). */
  readonly beforeEnd?: (directory: { offset: number; size: number; entries: number }) => Buffer;
  /** The end record's count, size and offset: the real ones by default. */
  readonly end?: { entries: number; size: number; offset: number };
}

/** A zip of stored entries written byte by byte, the way the tool in each test writes its archives. */
function handZip(entries: readonly HandEntry[], trailer: HandTrailer = {}): Buffer {
  const locals: Buffer[] = [];
  const centrals: Buffer[] = [];
  let offset = 0;
  for (const entry of entries) {
    const flags = entry.flags ?? 0;
    const descriptor = (flags & DATA_DESCRIPTOR_FLAG) !== 0;
    const crc = crc32(entry.data);
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4);
    local.writeUInt16LE(flags, 6);
    local.writeUInt32LE(descriptor ? 0 : crc, 14);
    local.writeUInt32LE(descriptor ? 0 : entry.data.length, 18);
    local.writeUInt32LE(descriptor ? 0 : entry.data.length, 22);
    local.writeUInt16LE(entry.name.length, 26);
    const dataDescriptor = Buffer.alloc(descriptor ? 16 : 0);
    if (descriptor) {
      dataDescriptor.writeUInt32LE(0x08074b50, 0);
      dataDescriptor.writeUInt32LE(crc, 4);
      dataDescriptor.writeUInt32LE(entry.data.length, 8);
      dataDescriptor.writeUInt32LE(entry.data.length, 12);
    }
    const extra = entry.extra ?? Buffer.alloc(0);
    const comment = entry.comment ?? Buffer.alloc(0);
    const central = Buffer.alloc(46);
    central.writeUInt32LE(0x02014b50, 0);
    // Made by Unix (3), as macOS and Info-ZIP write it.
    central.writeUInt16LE(0x0314, 4);
    central.writeUInt16LE(20, 6);
    central.writeUInt16LE(flags, 8);
    central.writeUInt32LE(crc, 16);
    central.writeUInt32LE(entry.data.length, 20);
    central.writeUInt32LE(entry.data.length, 24);
    central.writeUInt16LE(entry.name.length, 28);
    central.writeUInt16LE(extra.length, 30);
    central.writeUInt16LE(comment.length, 32);
    central.writeUInt32LE((0o100644 << 16) >>> 0, 38);
    central.writeUInt32LE(offset, 42);
    const localRecord = Buffer.concat([local, entry.name, entry.data, dataDescriptor]);
    locals.push(localRecord);
    centrals.push(Buffer.concat([central, entry.name, extra, comment]));
    offset += localRecord.length;
  }
  const directory = Buffer.concat(centrals);
  const real = { offset, size: directory.length, entries: entries.length };
  const beforeEnd = trailer.beforeEnd?.(real) ?? Buffer.alloc(0);
  const written = trailer.end ?? real;
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(written.entries, 8);
  end.writeUInt16LE(written.entries, 10);
  end.writeUInt32LE(written.size, 12);
  end.writeUInt32LE(written.offset, 16);
  return Buffer.concat([...locals, directory, beforeEnd, end]);
}

/** A zip64 end record and its locator for the directory, the locator saying `totalDisks` disks in all. */
function zip64Records(totalDisks: number) {
  return (directory: { offset: number; size: number; entries: number }) => {
    const record = Buffer.alloc(56);
    record.writeUInt32LE(0x06064b50, 0);
    record.writeBigUInt64LE(44n, 4);
    record.writeUInt16LE(45, 12);
    record.writeUInt16LE(45, 14);
    record.writeBigUInt64LE(BigInt(directory.entries), 24);
    record.writeBigUInt64LE(BigInt(directory.entries), 32);
    record.writeBigUInt64LE(BigInt(directory.size), 40);
    record.writeBigUInt64LE(BigInt(directory.offset), 48);
    const locator = Buffer.alloc(20);
    locator.writeUInt32LE(0x07064b50, 0);
    locator.writeBigUInt64LE(BigInt(directory.offset + directory.size), 8);
    locator.writeUInt32LE(totalDisks, 16);
    return Buffer.concat([record, locator]);
  };
}
const SATURATED = { entries: 0xffff, size: 0xffffffff, offset: 0xffffffff };

const EXPORT =
  'TRANSACTIONID;ORDERID;OPERATIONTYPE;AMOUNT;CURRENCY;EXECCODE\nT-WORLD-1;O-WORLD-1;payment;12.50;EUR;0000\n';

function write(name: string, bytes: Buffer): string {
  const file = path.join(scratch, name);
  writeFileSync(file, bytes);
  return file;
}

async function entriesOf(file: string): Promise<{ name: string | null; label: string; text: string }[]> {
  const opened = await openExport(file, LIMITS);
  try {
    const read = [];
    for await (const entry of opened.entries)
      read.push({ name: entry.name, label: entry.label, text: await text(await entry.open()) });
    return read;
  } finally {
    await opened.close();
  }
}

/** The Info-ZIP Unicode Path extra field (0x7075): the UTF-8 name of an entry whose name field holds `raw`. */
function unicodePathField(raw: Buffer, name: string): Buffer {
  const utf8 = Buffer.from(name);
  const field = Buffer.alloc(9 + utf8.length);
  field.writeUInt16LE(0x7075, 0);
  field.writeUInt16LE(5 + utf8.length, 2);
  field.writeUInt8(1, 4);
  field.writeUInt32LE(crc32(raw), 5);
  utf8.copy(field, 9);
  return field;
}

describe('zip entry names as real tools write them', () => {
  it('reads a UTF-8 name without the UTF-8 flag as UTF-8, as macOS Archive Utility writes it', async () => {
    const file = write(
      'archive-utility.zip',
      handZip([{ name: Buffer.from('世界/交易 été.csv'), data: Buffer.from(EXPORT) }]),
    );
    expect(await entriesOf(file)).toEqual([
      { name: '世界/交易 été.csv', label: `${file}: entry 世界/交易 été.csv`, text: EXPORT },
    ]);
  });

  it('reads a name that is not UTF-8 as CP437, the format default, as a DOS tool wrote it', async () => {
    // "café.csv" in CP437: é is 0x82, which no UTF-8 sequence starts with.
    const raw = Buffer.from([0x63, 0x61, 0x66, 0x82, 0x2e, 0x63, 0x73, 0x76]);
    const file = write('dos.zip', handZip([{ name: raw, data: Buffer.from(EXPORT) }]));
    expect((await entriesOf(file)).map((entry) => entry.name)).toEqual(['café.csv']);
  });

  it('reads a name flagged UTF-8 as UTF-8, and prefers an Info-ZIP Unicode Path field that matches the name', async () => {
    const flagged = Buffer.from('données.csv');
    const dosName = Buffer.from([0x6d, 0x81, 0x6c, 0x6c, 0x65, 0x72, 0x2e, 0x63, 0x73, 0x76]);
    // A UTF-8 name field whose Unicode Path field names the entry otherwise: the field wins, as yauzl and Info-ZIP read it.
    const utf8Raw = Buffer.from('ancien.csv');
    const file = write(
      'flagged.zip',
      handZip([
        { name: flagged, data: Buffer.from(EXPORT), flags: UTF8_FLAG },
        { name: dosName, data: Buffer.from(EXPORT), extra: unicodePathField(dosName, 'müller-世界.csv') },
        { name: utf8Raw, data: Buffer.from(EXPORT), extra: unicodePathField(utf8Raw, 'nouveau.csv') },
      ]),
    );
    expect((await entriesOf(file)).map((entry) => entry.name)).toEqual([
      'données.csv',
      'müller-世界.csv',
      'nouveau.csv',
    ]);
  });

  it('still refuses a UTF-8 name that climbs out of the archive', async () => {
    const file = write('climbing.zip', handZip([{ name: Buffer.from('../世界.csv'), data: Buffer.from(EXPORT) }]));
    await expectReconError(() => entriesOf(file), 'ARCHIVE_CORRUPT', file, 'invalid relative path');
  });
});

describe('zip end records as real tools write them', () => {
  it("reads an archive shaped like Go's TestIssue12449: locator-like bytes before an end record that is not zip64", async () => {
    // The entry's Unix extra field holds an end record's signature, and the directory ends (its comment) with the
    // zip64 locator's signature followed by garbage: a disk number, an offset past 2^62 and a count of disks. The end
    // record after it has its real count, size and offset, none saturated: the archive is zip32.
    const unixExtra = Buffer.concat([
      Buffer.from([0x75, 0x78, 0x0b, 0x00]),
      Buffer.from([0x50, 0x4b, 0x05, 0x06, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x01]),
    ]);
    const locatorShaped = Buffer.alloc(20);
    locatorShaped.writeUInt32LE(0x07064b50, 0);
    locatorShaped.writeUInt32LE(0xafc119c8, 4);
    locatorShaped.writeBigUInt64LE(0x421994be44619c94n, 8);
    locatorShaped.writeUInt32LE(0x5bc61258, 16);
    const comment = Buffer.concat([Buffer.from('0123456789ab'), locatorShaped]);
    const name = Buffer.from([0xca, 0x64, 0x55, 0x2e, 0x63, 0x73, 0x76]);
    const bytes = handZip([
      { name, data: Buffer.from(EXPORT), flags: DATA_DESCRIPTOR_FLAG, extra: unixExtra, comment },
    ]);
    // As in Go's archive: the locator's signature sits right before the end record (22 bytes, no comment).
    expect(bytes.readUInt32LE(bytes.length - 22 - 20)).toBe(0x07064b50);
    const file = write('go-issue-12449.zip', bytes);
    expect(await entriesOf(file)).toEqual([{ name: '╩dU.csv', label: `${file}: entry ╩dU.csv`, text: EXPORT }]);
  });

  it('reads a zip64 archive whose locator says 0 disks in all as one disk, and 1 as well', async () => {
    for (const totalDisks of [0, 1]) {
      const file = write(
        `zip64-${totalDisks}-disks.zip`,
        handZip([{ name: Buffer.from('export.csv'), data: Buffer.from(EXPORT) }], {
          beforeEnd: zip64Records(totalDisks),
          end: SATURATED,
        }),
      );
      expect(await entriesOf(file)).toEqual([expect.objectContaining({ name: 'export.csv', text: EXPORT })]);
    }
  });

  it('refuses a zip64 archive whose locator says 2 disks, or puts its record on another disk, as multi-disk', async () => {
    const twoDisks = write(
      'zip64-2-disks.zip',
      handZip([{ name: Buffer.from('export.csv'), data: Buffer.from(EXPORT) }], {
        beforeEnd: zip64Records(2),
        end: SATURATED,
      }),
    );
    await expectReconError(() => entriesOf(twoDisks), 'ARCHIVE_CORRUPT', twoDisks, 'a multi-disk zip64 archive');
    const otherDisk = handZip([{ name: Buffer.from('export.csv'), data: Buffer.from(EXPORT) }], {
      beforeEnd: zip64Records(1),
      end: SATURATED,
    });
    otherDisk.writeUInt32LE(3, zipLayout(otherDisk).zip64Locator! + 4);
    const file = write('zip64-other-disk.zip', otherDisk);
    await expectReconError(() => entriesOf(file), 'ARCHIVE_CORRUPT', file, 'a multi-disk zip64 archive');
  });
});

/** What lineage and messages keep of an entry's name, on both backends. */
describe.each(BACKENDS)('entry names in lineage and messages on %s', (backend) => {
  const skip = backend === 'postgres' && !hasPostgres;
  let testDb: TestDatabase;
  beforeAll(async () => {
    if (skip) return;
    testDb = await createTestDatabase(backend);
  });
  afterAll(async () => testDb?.drop());

  it.skipIf(skip)('keeps a UTF-8 name written without the flag as written, in lineage and in a failure', async () => {
    const loaded = write(
      `lineage-${backend}.zip`,
      handZip([
        {
          name: Buffer.from('世界.csv'),
          data: Buffer.from(`${EXPORT}T-WORLD-2;O-WORLD-2;payment;not money;EUR;0000\n`),
        },
      ]),
    );
    const broken = write(
      `broken-${backend}.zip`,
      handZip([{ name: Buffer.from('交易.csv'), data: Buffer.from('NOT;AN;EXPORT\n1;2;3\n') }]),
    );
    const [first, second] = await ingestFiles(testDb.database, [loaded, broken], { timezone: 'UTC', limits: LIMITS });
    expect(first).toMatchObject({ status: 'loaded' });
    const { db } = testDb.database;
    expect(await db.selectFrom('recon.transactions').select(['transaction_id', 'entry', 'line']).execute()).toEqual([
      { transaction_id: 'T-WORLD-1', entry: '世界.csv', line: 2 },
    ]);
    expect(await db.selectFrom('recon.rejected_rows').select(['entry', 'line']).execute()).toEqual([
      { entry: '世界.csv', line: 3 },
    ]);
    expect(second).toMatchObject({ status: 'failed' });
    expect(second!.status === 'failed' && second!.error).toContain(`${broken}: entry 交易.csv`);
  });
});
