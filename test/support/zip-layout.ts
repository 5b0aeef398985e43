/**
 * Where the records of a well-formed zip are, so tests can overwrite one field of one record: the offsets of
 * its local headers, central headers, end record and, for zip64, the locator, the zip64 end record and each
 * central header's zip64 extra field. Only for archives the tests made (no comment, found by their offsets).
 */
export interface ZipLayout {
  readonly localHeaders: readonly number[];
  readonly centralHeaders: readonly number[];
  /** Offset of each central header's zip64 extra field data (after its 4-byte id and size), or null. */
  readonly zip64Extras: readonly (number | null)[];
  readonly end: number;
  readonly zip64Locator: number | null;
  readonly zip64Record: number | null;
}

export const CENTRAL_FIELDS = {
  signature: 0,
  flags: 8,
  method: 10,
  crc: 16,
  compressedSize: 20,
  size: 24,
  nameLength: 28,
  extraLength: 30,
  commentLength: 32,
  disk: 34,
  localHeaderOffset: 42,
} as const;
export const END_FIELDS = {
  signature: 0,
  disk: 4,
  directoryDisk: 6,
  entriesOnDisk: 8,
  entries: 10,
  directorySize: 12,
  directoryOffset: 16,
  commentLength: 20,
} as const;

export function zipLayout(zip: Buffer): ZipLayout {
  const end = zip.lastIndexOf(Buffer.from([0x50, 0x4b, 0x05, 0x06]));
  if (end < 0) throw new Error('no end record');
  const zip64Locator = end >= 20 && zip.readUInt32LE(end - 20) === 0x07064b50 ? end - 20 : null;
  const zip64Record = zip64Locator === null ? null : Number(zip.readBigUInt64LE(zip64Locator + 8));
  const entryCount = zip64Record === null ? zip.readUInt16LE(end + 10) : Number(zip.readBigUInt64LE(zip64Record + 32));
  let at = zip64Record === null ? zip.readUInt32LE(end + 16) : Number(zip.readBigUInt64LE(zip64Record + 48));
  const centralHeaders: number[] = [];
  const zip64Extras: (number | null)[] = [];
  const localHeaders: number[] = [];
  for (let n = 0; n < entryCount; n++) {
    centralHeaders.push(at);
    const nameLength = zip.readUInt16LE(at + 28);
    const extraLength = zip.readUInt16LE(at + 30);
    zip64Extras.push(findExtra(zip, at + 46 + nameLength, extraLength, 0x0001));
    const zip64Offset = zip.readUInt32LE(at + 42) === 0xffffffff && zip64Extras[n] !== null;
    localHeaders.push(zip64Offset ? Number(zip.readBigUInt64LE(zip64Extras[n]! + 16)) : zip.readUInt32LE(at + 42));
    at += 46 + nameLength + extraLength + zip.readUInt16LE(at + 32);
  }
  return { localHeaders, centralHeaders, zip64Extras, end, zip64Locator, zip64Record };
}

function findExtra(zip: Buffer, start: number, length: number, id: number): number | null {
  for (let at = start; at + 4 <= start + length; at += 4 + zip.readUInt16LE(at + 2)) {
    if (zip.readUInt16LE(at) === id) return at + 4;
  }
  return null;
}
