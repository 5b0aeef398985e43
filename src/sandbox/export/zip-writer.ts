import { crc32, deflateRawSync } from 'node:zlib';

/**
 * A zip archive holding one deflated file: local header, data, central directory, end record (APPNOTE 6.3).
 * Sizes and CRC go in the local header, with no data descriptor, because streaming readers (unzipper's Parse)
 * mishandle descriptor entries; the whole csv is in memory anyway. No zip64: an export above 4 GiB is refused.
 */
const LOCAL_HEADER = 0x04034b50;
const CENTRAL_HEADER = 0x02014b50;
const END_OF_CENTRAL_DIRECTORY = 0x06054b50;
const VERSION_NEEDED = 20; // 2.0: deflate
const FLAG_UTF8_NAME = 0x0800;
const METHOD_DEFLATE = 8;
const ZIP32_LIMIT = 0xffffffff;

export function writeSingleEntryZip(entryName: string, content: Buffer, modifiedAt: Date): Buffer {
  if (content.length >= ZIP32_LIMIT) throw new RangeError(`zip entry ${entryName} is too large for a zip32 archive`);
  const name = Buffer.from(entryName, 'utf8');
  const data = deflateRawSync(content);
  const checksum = crc32(content);
  const { time, date } = dosDateTime(modifiedAt);

  const local = Buffer.alloc(30);
  local.writeUInt32LE(LOCAL_HEADER, 0);
  local.writeUInt16LE(VERSION_NEEDED, 4);
  local.writeUInt16LE(FLAG_UTF8_NAME, 6);
  local.writeUInt16LE(METHOD_DEFLATE, 8);
  local.writeUInt16LE(time, 10);
  local.writeUInt16LE(date, 12);
  local.writeUInt32LE(checksum, 14);
  local.writeUInt32LE(data.length, 18);
  local.writeUInt32LE(content.length, 22);
  local.writeUInt16LE(name.length, 26);
  local.writeUInt16LE(0, 28); // extra field length

  const central = Buffer.alloc(46);
  central.writeUInt32LE(CENTRAL_HEADER, 0);
  central.writeUInt16LE(VERSION_NEEDED, 4); // version made by
  central.writeUInt16LE(VERSION_NEEDED, 6);
  central.writeUInt16LE(FLAG_UTF8_NAME, 8);
  central.writeUInt16LE(METHOD_DEFLATE, 10);
  central.writeUInt16LE(time, 12);
  central.writeUInt16LE(date, 14);
  central.writeUInt32LE(checksum, 16);
  central.writeUInt32LE(data.length, 20);
  central.writeUInt32LE(content.length, 24);
  central.writeUInt16LE(name.length, 28);
  // extra length, comment length, disk number, internal and external attributes, local header offset: all 0
  const centralOffset = local.length + name.length + data.length;

  const end = Buffer.alloc(22);
  end.writeUInt32LE(END_OF_CENTRAL_DIRECTORY, 0);
  end.writeUInt16LE(1, 8); // entries on this disk
  end.writeUInt16LE(1, 10); // entries in total
  end.writeUInt32LE(central.length + name.length, 12);
  end.writeUInt32LE(centralOffset, 16);

  return Buffer.concat([local, name, data, central, name, end]);
}

/** MS-DOS time and date fields (2-second resolution, years from 1980), from the UTC reading of `at`. */
function dosDateTime(at: Date): { time: number; date: number } {
  const year = Math.min(Math.max(at.getUTCFullYear(), 1980), 2107);
  return {
    time: (at.getUTCHours() << 11) | (at.getUTCMinutes() << 5) | Math.floor(at.getUTCSeconds() / 2),
    date: ((year - 1980) << 9) | ((at.getUTCMonth() + 1) << 5) | at.getUTCDate(),
  };
}
