import { crc32, deflateRawSync } from 'node:zlib';
import { pseudoRandomBytes } from './pseudo-random-bytes.ts';

export interface ZipEntryInput {
  name: string;
  data?: Buffer;
  method?: 'stored' | 'deflate';
  dataDescriptor?: boolean;
  password?: string;
}

// 2024-04-01 00:00:00 in MS-DOS format.
const DOS_DATE = ((2024 - 1980) << 9) | (4 << 5) | 1;
const DOS_TIME = 0;

const CRC_TABLE = Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});

function zipCryptoEncrypt(payload: Buffer, password: string, crc: number): Buffer {
  const keys = [0x12345678, 0x23456789, 0x34567890];
  const updateKeys = (byte: number) => {
    keys[0] = (CRC_TABLE[(keys[0]! ^ byte) & 0xff]! ^ (keys[0]! >>> 8)) >>> 0;
    keys[1] = (Math.imul((keys[1]! + (keys[0]! & 0xff)) >>> 0, 134_775_813) + 1) >>> 0;
    keys[2] = (CRC_TABLE[(keys[2]! ^ (keys[1]! >>> 24)) & 0xff]! ^ (keys[2]! >>> 8)) >>> 0;
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

/**
 * A minimal zip writer (PKWARE APPNOTE 6.3): stored or deflated entries, optional data descriptor
 * (general purpose bit 3, as streaming zippers write: zero crc and sizes in the local header), optional
 * traditional PKWARE encryption ("ZipCrypto", what `zip -P` writes).
 * Used by make-fixtures.ts and by tests that need an archive of their own.
 */
export function zipArchive(entries: readonly ZipEntryInput[]): Buffer {
  const localParts: Buffer[] = [];
  const centralParts: Buffer[] = [];
  let offset = 0;
  for (const entry of entries) {
    const isDirectory = entry.name.endsWith('/');
    const data = entry.data ?? Buffer.alloc(0);
    const method = entry.method === 'deflate' ? 8 : 0;
    const crc = crc32(data);
    let payload = method === 8 ? deflateRawSync(data, { level: 9 }) : data;
    let flags = 0x0800; // names are UTF-8
    if (entry.password !== undefined) {
      payload = zipCryptoEncrypt(payload, entry.password, crc);
      flags |= 0x0001;
    }
    if (entry.dataDescriptor) flags |= 0x0008;
    const name = Buffer.from(entry.name, 'utf8');

    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4);
    local.writeUInt16LE(flags, 6);
    local.writeUInt16LE(method, 8);
    local.writeUInt16LE(DOS_TIME, 10);
    local.writeUInt16LE(DOS_DATE, 12);
    local.writeUInt32LE(entry.dataDescriptor ? 0 : crc, 14);
    local.writeUInt32LE(entry.dataDescriptor ? 0 : payload.length, 18);
    local.writeUInt32LE(entry.dataDescriptor ? 0 : data.length, 22);
    local.writeUInt16LE(name.length, 26);
    local.writeUInt16LE(0, 28);
    const parts = [local, name, payload];
    if (entry.dataDescriptor) {
      const descriptor = Buffer.alloc(16);
      descriptor.writeUInt32LE(0x08074b50, 0);
      descriptor.writeUInt32LE(crc, 4);
      descriptor.writeUInt32LE(payload.length, 8);
      descriptor.writeUInt32LE(data.length, 12);
      parts.push(descriptor);
    }
    const localRecord = Buffer.concat(parts);
    localParts.push(localRecord);

    const central = Buffer.alloc(46);
    central.writeUInt32LE(0x02014b50, 0);
    central.writeUInt16LE(0x031e, 4); // made by: Unix, spec 3.0
    central.writeUInt16LE(20, 6);
    central.writeUInt16LE(flags, 8);
    central.writeUInt16LE(method, 10);
    central.writeUInt16LE(DOS_TIME, 12);
    central.writeUInt16LE(DOS_DATE, 14);
    central.writeUInt32LE(crc, 16);
    central.writeUInt32LE(payload.length, 20);
    central.writeUInt32LE(data.length, 24);
    central.writeUInt16LE(name.length, 28);
    central.writeUInt32LE(isDirectory ? ((0o40755 << 16) | 0x10) >>> 0 : (0o100644 << 16) >>> 0, 38);
    central.writeUInt32LE(offset, 42);
    centralParts.push(central, name);
    offset += localRecord.length;
  }
  const centralDirectory = Buffer.concat(centralParts);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(entries.length, 8);
  end.writeUInt16LE(entries.length, 10);
  end.writeUInt32LE(centralDirectory.length, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...localParts, centralDirectory, end]);
}
