import { writeZip, type ZipOptions } from '@recon/sandbox';
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
 * The fixtures' archives: the sandbox's zip writer (the repository's one) with a fixed date and level 9, in zip64
 * form when asked, and traditional PKWARE encryption ("ZipCrypto", what `zip -P` writes) where an entry has a
 * password, which only tests need. Used by make-fixtures.ts and by tests that need an archive of their own.
 */
export function zipArchive(entries: readonly ZipEntryInput[], options: ZipOptions = {}): Buffer {
  return writeZip(
    entries.map(({ password, ...entry }) => ({
      ...entry,
      level: 9,
      modifiedAt: FIXTURE_DATE,
      ...(password === undefined
        ? {}
        : { encrypt: (payload: Buffer, crc: number) => zipCryptoEncrypt(payload, password, crc) }),
    })),
    options,
  );
}
