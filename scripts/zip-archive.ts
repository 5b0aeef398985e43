import { writeZip } from '@recon/sandbox';
import { pseudoRandomBytes } from './pseudo-random-bytes.ts';

const CRC_TABLE = Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});

function zipCryptoEncrypt(payload: Buffer, password: string, crc: number): Buffer {
  const keys = [0x12345678, 0x23456789, 0x34567890];
  const updateKeys = (byte: number) => {
    keys[0] = (CRC_TABLE[(keys[0]! ^ byte) & 0xff]! ^ (keys[0]! >>> 8)) >>> 0;
    keys[1] = (Math.imul((keys[1]! + (keys[0] & 0xff)) >>> 0, 134_775_813) + 1) >>> 0;
    keys[2] = (CRC_TABLE[(keys[2]! ^ (keys[1] >>> 24)) & 0xff]! ^ (keys[2]! >>> 8)) >>> 0;
  };
  const keyStreamByte = () => {
    const temp = (keys[2]! | 2) & 0xffff;
    return (Math.imul(temp, temp ^ 1) >>> 8) & 0xff;
  };
  for (const byte of Buffer.from(password, 'utf8')) updateKeys(byte);
  // The 12-byte encryption header ends with the crc's high byte, which readers use to check the password.
  const header = pseudoRandomBytes(12, crc);
  header[11] = crc >>> 24;
  const plain = Buffer.concat([header, payload]);
  const encrypted = Buffer.alloc(plain.length);
  for (let i = 0; i < plain.length; i++) {
    const byte = plain[i]!;
    encrypted[i] = byte ^ keyStreamByte();
    updateKeys(byte);
  }
  return encrypted;
}

/** An entry of a fixture archive: `writeZip`'s, plus a password for ZipCrypto. */
export interface ZipEntryInput {
  name: string;
  data?: Buffer;
  method?: 'stored' | 'deflate';
  dataDescriptor?: boolean;
  password?: string;
}

// Fixtures carry a fixed date so that rerunning the script gives the same bytes.
const FIXTURE_DATE = new Date(Date.UTC(2024, 3, 1));

/**
 * The fixtures' archives: recon's zip writer with a fixed date and level 9, and traditional PKWARE
 * encryption ("ZipCrypto", what `zip -P` writes) where an entry has a password, which only tests need.
 * Used by make-fixtures.ts and by tests that need an archive of their own.
 */
export function zipArchive(entries: readonly ZipEntryInput[]): Buffer {
  return writeZip(
    entries.map(({ password, ...entry }) => ({
      ...entry,
      level: 9,
      modifiedAt: FIXTURE_DATE,
      ...(password === undefined
        ? {}
        : { encrypt: (payload: Buffer, crc: number) => zipCryptoEncrypt(payload, password, crc) }),
    })),
  );
}

const CENTRAL_HEADER = 0x02014b50;
const END_OF_CENTRAL_DIRECTORY = 0x06054b50;
const ZIP64_END_RECORD = 0x06064b50;
const ZIP64_END_LOCATOR = 0x07064b50;
const ZIP64_EXTRA_FIELD = 0x0001;
const VERSION_ZIP64 = 45;

/**
 * A zip32 archive of `zipArchive` (no comment) in zip64 form, as zippers write large or streamed archives: a zip64
 * end record and locator before an end record whose count, size and offset are saturated (0xffff, 0xffffffff).
 * With `extraFields`, every central header also moves its sizes and local header offset into a zip64 extra field,
 * leaving 0xffffffff in their place.
 */
export function toZip64(zip32: Buffer, { extraFields }: { extraFields: boolean }): Buffer {
  const end = zip32.length - 22;
  if (zip32.readUInt32LE(end) !== END_OF_CENTRAL_DIRECTORY)
    throw new Error('toZip64 takes an archive without a comment');
  const entryCount = zip32.readUInt16LE(end + 10);
  const directoryOffset = zip32.readUInt32LE(end + 16);
  const headers: Buffer[] = [];
  let at = directoryOffset;
  for (let n = 0; n < entryCount; n++) {
    if (zip32.readUInt32LE(at) !== CENTRAL_HEADER) throw new Error(`no central header at ${at}`);
    const variableBytes = zip32.readUInt16LE(at + 28) + zip32.readUInt16LE(at + 30) + zip32.readUInt16LE(at + 32);
    const header = Buffer.from(zip32.subarray(at, at + 46 + variableBytes));
    at += header.length;
    if (!extraFields) {
      headers.push(header);
      continue;
    }
    const extra = Buffer.alloc(28);
    extra.writeUInt16LE(ZIP64_EXTRA_FIELD, 0);
    extra.writeUInt16LE(24, 2);
    // The field's order is fixed: uncompressed size, compressed size, local header offset.
    extra.writeBigUInt64LE(BigInt(header.readUInt32LE(24)), 4);
    extra.writeBigUInt64LE(BigInt(header.readUInt32LE(20)), 12);
    extra.writeBigUInt64LE(BigInt(header.readUInt32LE(42)), 20);
    header.writeUInt16LE(VERSION_ZIP64, 6);
    header.writeUInt32LE(0xffffffff, 20);
    header.writeUInt32LE(0xffffffff, 24);
    header.writeUInt32LE(0xffffffff, 42);
    const nameEnd = 46 + header.readUInt16LE(28);
    header.writeUInt16LE(header.readUInt16LE(30) + extra.length, 30);
    headers.push(Buffer.concat([header.subarray(0, nameEnd), extra, header.subarray(nameEnd)]));
  }
  const directory = Buffer.concat(headers);
  const recordOffset = directoryOffset + directory.length;
  const record = Buffer.alloc(56);
  record.writeUInt32LE(ZIP64_END_RECORD, 0);
  record.writeBigUInt64LE(BigInt(record.length - 12), 4);
  record.writeUInt16LE(VERSION_ZIP64, 12);
  record.writeUInt16LE(VERSION_ZIP64, 14);
  record.writeBigUInt64LE(BigInt(entryCount), 24);
  record.writeBigUInt64LE(BigInt(entryCount), 32);
  record.writeBigUInt64LE(BigInt(directory.length), 40);
  record.writeBigUInt64LE(BigInt(directoryOffset), 48);
  const locator = Buffer.alloc(20);
  locator.writeUInt32LE(ZIP64_END_LOCATOR, 0);
  locator.writeBigUInt64LE(BigInt(recordOffset), 8);
  locator.writeUInt32LE(1, 16);
  const endRecord = Buffer.alloc(22);
  endRecord.writeUInt32LE(END_OF_CENTRAL_DIRECTORY, 0);
  endRecord.writeUInt16LE(0xffff, 8);
  endRecord.writeUInt16LE(0xffff, 10);
  endRecord.writeUInt32LE(0xffffffff, 12);
  endRecord.writeUInt32LE(0xffffffff, 16);
  return Buffer.concat([zip32.subarray(0, directoryOffset), directory, record, locator, endRecord]);
}
