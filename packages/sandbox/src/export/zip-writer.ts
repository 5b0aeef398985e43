import { crc32, deflateRawSync } from 'node:zlib';

/**
 * A zip archive in memory (PKWARE APPNOTE 6.3, zip32): stored or deflated entries; sizes and CRC in the local
 * header, which every reader handles, unless `dataDescriptor` asks for what streaming zippers write (bit 3:
 * zero CRC and sizes up front, a descriptor after the data). The sandbox's zip exports and the fixtures of
 * broken or unusual archives both come from here; `encrypt` lets the fixtures script add ZipCrypto.
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

const LOCAL_HEADER = 0x04034b50;
const CENTRAL_HEADER = 0x02014b50;
const DATA_DESCRIPTOR = 0x08074b50;
const END_OF_CENTRAL_DIRECTORY = 0x06054b50;
const VERSION_NEEDED = 20; // 2.0: deflate
const MADE_BY_UNIX = 0x031e; // Unix, spec 3.0: external attributes hold the file mode
const FLAG_ENCRYPTED = 0x0001;
const FLAG_DATA_DESCRIPTOR = 0x0008;
const FLAG_UTF8_NAME = 0x0800;
const METHOD_STORED = 0;
const METHOD_DEFLATE = 8;
const ZIP32_LIMIT = 0xffffffff;
const DOS_EPOCH = new Date(Date.UTC(1980, 0, 1));

export function writeZip(entries: readonly ZipEntry[]): Buffer {
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

    const central = Buffer.alloc(46);
    central.writeUInt32LE(CENTRAL_HEADER, 0);
    central.writeUInt16LE(MADE_BY_UNIX, 4);
    central.writeUInt16LE(VERSION_NEEDED, 6);
    central.writeUInt16LE(flags, 8);
    central.writeUInt16LE(method, 10);
    central.writeUInt16LE(time, 12);
    central.writeUInt16LE(date, 14);
    central.writeUInt32LE(crc, 16);
    central.writeUInt32LE(payload.length, 20);
    central.writeUInt32LE(data.length, 24);
    central.writeUInt16LE(name.length, 28);
    const isDirectory = entry.name.endsWith('/');
    central.writeUInt32LE(isDirectory ? ((0o40755 << 16) | 0x10) >>> 0 : (0o100644 << 16) >>> 0, 38);
    central.writeUInt32LE(offset, 42);
    centralParts.push(central, name);
    offset += localRecord.length;
  }
  const centralDirectory = Buffer.concat(centralParts);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(END_OF_CENTRAL_DIRECTORY, 0);
  end.writeUInt16LE(entries.length, 8);
  end.writeUInt16LE(entries.length, 10);
  end.writeUInt32LE(centralDirectory.length, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...localParts, centralDirectory, end]);
}

/** MS-DOS time and date fields (2-second resolution, years 1980-2107), from the UTC reading of `at`. */
function dosDateTime(at: Date): { time: number; date: number } {
  const year = Math.min(Math.max(at.getUTCFullYear(), 1980), 2107);
  return {
    time: (at.getUTCHours() << 11) | (at.getUTCMinutes() << 5) | Math.floor(at.getUTCSeconds() / 2),
    date: ((year - 1980) << 9) | ((at.getUTCMonth() + 1) << 5) | at.getUTCDate(),
  };
}
