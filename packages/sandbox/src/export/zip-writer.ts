import { crc32, deflateRawSync } from 'node:zlib';

/**
 * A zip archive in memory (PKWARE APPNOTE 6.3): stored or deflated entries; sizes and CRC in the local header,
 * which every reader handles, unless `dataDescriptor` asks for what streaming zippers write (bit 3: zero CRC and
 * sizes up front, a descriptor after the data). The one zip writer of the repository: the sandbox's zip exports
 * and the fixtures of broken or unusual archives (scripts/zip-archive.ts) both come from here; `encrypt` lets the
 * fixtures add ZipCrypto, and `zip64` writes the zip64 form the fixtures need.
 */
export interface ZipEntry {
  /** A name ending in `/` is a directory. */
  readonly name: string;
  readonly data?: Buffer;
  readonly method?: 'stored' | 'deflate';
  /** zlib level for deflated entries (default 6). */
  readonly level?: number;
  readonly dataDescriptor?: boolean;
  readonly modifiedAt?: Date;
  /** Encrypts the (compressed) payload; the entry is then flagged encrypted. */
  readonly encrypt?: (payload: Buffer, crc: number) => Buffer;
}

export interface ZipOptions {
  /**
   * The zip64 form of an archive, as zippers write large or streamed ones (the entries stay under 4 GiB): a zip64
   * end record and locator before an end record whose count, size and offset are saturated (0xffff, 0xffffffff).
   * With `extraFields`, every central header also moves its sizes and local header offset into a zip64 extra
   * field, leaving 0xffffffff in their place.
   */
  readonly zip64?: { readonly extraFields: boolean };
}

const LOCAL_HEADER = 0x04034b50;
const CENTRAL_HEADER = 0x02014b50;
const DATA_DESCRIPTOR = 0x08074b50;
const END_OF_CENTRAL_DIRECTORY = 0x06054b50;
const ZIP64_END_RECORD = 0x06064b50;
const ZIP64_END_LOCATOR = 0x07064b50;
const ZIP64_EXTRA_FIELD = 0x0001;
const VERSION_NEEDED = 20; // 2.0: deflate
const VERSION_ZIP64 = 45; // 4.5: zip64
const MADE_BY_UNIX = 0x031e; // Unix, spec 3.0: external attributes hold the file mode
const FLAG_ENCRYPTED = 0x0001;
const FLAG_DATA_DESCRIPTOR = 0x0008;
const FLAG_UTF8_NAME = 0x0800;
const METHOD_STORED = 0;
const METHOD_DEFLATE = 8;
const ZIP32_LIMIT = 0xffffffff;
const DOS_EPOCH = new Date(Date.UTC(1980, 0, 1));

export function writeZip(entries: readonly ZipEntry[], { zip64 }: ZipOptions = {}): Buffer {
  const localParts: Buffer[] = [];
  const centralParts: Buffer[] = [];
  let offset = 0;
  for (const entry of entries) {
    const data = entry.data ?? Buffer.alloc(0);
    if (data.length >= ZIP32_LIMIT) throw new RangeError(`zip entry ${entry.name} is too large for a zip32 archive`);
    const method = entry.method === 'deflate' ? METHOD_DEFLATE : METHOD_STORED;
    const crc = crc32(data);
    let payload = method === METHOD_DEFLATE ? deflateRawSync(data, { level: entry.level ?? 6 }) : data;
    let flags = FLAG_UTF8_NAME;
    if (entry.encrypt) {
      payload = entry.encrypt(payload, crc);
      flags |= FLAG_ENCRYPTED;
    }
    if (entry.dataDescriptor) flags |= FLAG_DATA_DESCRIPTOR;
    const name = Buffer.from(entry.name, 'utf8');
    const { time, date } = dosDateTime(entry.modifiedAt ?? DOS_EPOCH);

    const local = Buffer.alloc(30);
    local.writeUInt32LE(LOCAL_HEADER, 0);
    local.writeUInt16LE(VERSION_NEEDED, 4);
    local.writeUInt16LE(flags, 6);
    local.writeUInt16LE(method, 8);
    local.writeUInt16LE(time, 10);
    local.writeUInt16LE(date, 12);
    local.writeUInt32LE(entry.dataDescriptor ? 0 : crc, 14);
    local.writeUInt32LE(entry.dataDescriptor ? 0 : payload.length, 18);
    local.writeUInt32LE(entry.dataDescriptor ? 0 : data.length, 22);
    local.writeUInt16LE(name.length, 26);
    const parts = [local, name, payload];
    if (entry.dataDescriptor) {
      const descriptor = Buffer.alloc(16);
      descriptor.writeUInt32LE(DATA_DESCRIPTOR, 0);
      descriptor.writeUInt32LE(crc, 4);
      descriptor.writeUInt32LE(payload.length, 8);
      descriptor.writeUInt32LE(data.length, 12);
      parts.push(descriptor);
    }
    const localRecord = Buffer.concat(parts);
    localParts.push(localRecord);

    // In a zip64 extra field, the sizes and the offset stand in the order the format fixes.
    const extra = zip64?.extraFields
      ? zip64ExtraField([BigInt(data.length), BigInt(payload.length), BigInt(offset)])
      : Buffer.alloc(0);
    const saturated = extra.length > 0;
    const central = Buffer.alloc(46);
    central.writeUInt32LE(CENTRAL_HEADER, 0);
    central.writeUInt16LE(MADE_BY_UNIX, 4);
    central.writeUInt16LE(saturated ? VERSION_ZIP64 : VERSION_NEEDED, 6);
    central.writeUInt16LE(flags, 8);
    central.writeUInt16LE(method, 10);
    central.writeUInt16LE(time, 12);
    central.writeUInt16LE(date, 14);
    central.writeUInt32LE(crc, 16);
    central.writeUInt32LE(saturated ? ZIP32_LIMIT : payload.length, 20);
    central.writeUInt32LE(saturated ? ZIP32_LIMIT : data.length, 24);
    central.writeUInt16LE(name.length, 28);
    central.writeUInt16LE(extra.length, 30);
    const isDirectory = entry.name.endsWith('/');
    central.writeUInt32LE(isDirectory ? ((0o40755 << 16) | 0x10) >>> 0 : (0o100644 << 16) >>> 0, 38);
    central.writeUInt32LE(saturated ? ZIP32_LIMIT : offset, 42);
    centralParts.push(central, name, extra);
    offset += localRecord.length;
  }
  const centralDirectory = Buffer.concat(centralParts);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(END_OF_CENTRAL_DIRECTORY, 0);
  if (!zip64) {
    end.writeUInt16LE(entries.length, 8);
    end.writeUInt16LE(entries.length, 10);
    end.writeUInt32LE(centralDirectory.length, 12);
    end.writeUInt32LE(offset, 16);
    return Buffer.concat([...localParts, centralDirectory, end]);
  }
  end.writeUInt16LE(0xffff, 8);
  end.writeUInt16LE(0xffff, 10);
  end.writeUInt32LE(ZIP32_LIMIT, 12);
  end.writeUInt32LE(ZIP32_LIMIT, 16);
  const record = Buffer.alloc(56);
  record.writeUInt32LE(ZIP64_END_RECORD, 0);
  record.writeBigUInt64LE(BigInt(record.length - 12), 4);
  record.writeUInt16LE(VERSION_ZIP64, 12);
  record.writeUInt16LE(VERSION_ZIP64, 14);
  record.writeBigUInt64LE(BigInt(entries.length), 24);
  record.writeBigUInt64LE(BigInt(entries.length), 32);
  record.writeBigUInt64LE(BigInt(centralDirectory.length), 40);
  record.writeBigUInt64LE(BigInt(offset), 48);
  const locator = Buffer.alloc(20);
  locator.writeUInt32LE(ZIP64_END_LOCATOR, 0);
  locator.writeBigUInt64LE(BigInt(offset + centralDirectory.length), 8);
  locator.writeUInt32LE(1, 16);
  return Buffer.concat([...localParts, centralDirectory, record, locator, end]);
}

function zip64ExtraField(values: readonly bigint[]): Buffer {
  const field = Buffer.alloc(4 + 8 * values.length);
  field.writeUInt16LE(ZIP64_EXTRA_FIELD, 0);
  field.writeUInt16LE(8 * values.length, 2);
  values.forEach((value, index) => field.writeBigUInt64LE(value, 4 + 8 * index));
  return field;
}

/** MS-DOS time and date fields (2-second resolution, years 1980-2107), from the UTC reading of `at`. */
function dosDateTime(at: Date): { time: number; date: number } {
  const year = Math.min(Math.max(at.getUTCFullYear(), 1980), 2107);
  return {
    time: (at.getUTCHours() << 11) | (at.getUTCMinutes() << 5) | Math.floor(at.getUTCSeconds() / 2),
    date: ((year - 1980) << 9) | ((at.getUTCMonth() + 1) << 5) | at.getUTCDate(),
  };
}
