import type { IngestLimits } from '../config/config.ts';
import { ReconError } from '../errors.ts';

/**
 * Where a zip's central directory is, read from the records at the end of the file (the End Of Central Directory
 * record and, for zip64, its locator and record), every field checked against the file's length and the limits
 * before anything reads the directory. A crafted end record is how a small file makes a zip reader seek past
 * 2^53, read past the end of the file or walk millions of entries; zip readers trust it.
 */
export interface ZipDirectoryLocation {
  readonly entryCount: number;
  readonly offset: number;
  readonly size: number;
  /** Where the archive ends (its end record's comment included): what follows is not the archive's. */
  readonly archiveEnd: number;
}

/** The end record as found, before zip64 replaces its saturated fields. */
export interface ZipEndRecord {
  readonly entryCount: number;
  readonly directorySize: number;
  readonly directoryOffset: number;
  /** Where the end record starts: the directory must end before it (zip32). */
  readonly offset: number;
  /** Where the archive ends, with the end record's comment: bytes after it are not the archive's. */
  readonly end: number;
  /** Where the zip64 end record starts, from the locator just before the end record; null for zip32. */
  readonly zip64RecordOffset: number | null;
  /** Where the zip64 locator starts (the zip64 record must end there); null for zip32. */
  readonly zip64LocatorOffset: number | null;
}

const END_SIGNATURE = 0x06054b50;
const END_BYTES = 22;
const MAX_COMMENT_BYTES = 0xffff;
const ZIP64_LOCATOR_SIGNATURE = 0x07064b50;
const ZIP64_LOCATOR_BYTES = 20;
const ZIP64_RECORD_SIGNATURE = 0x06064b50;
/** The zip64 end record's fixed part; its "size" field counts the bytes after its first 12. */
export const ZIP64_RECORD_BYTES = 56;
const ZIP64_RECORD_SIZE_EXCLUDED = 12;
const CENTRAL_HEADER_BYTES = 46;
/** A central header's three variable fields (name, extra, comment) are at most 65,535 bytes each. */
const MAX_CENTRAL_HEADER_BYTES = CENTRAL_HEADER_BYTES + 3 * 0xffff;
/**
 * The directory may take this much per entry RECON_MAX_ZIP_ENTRIES allows: an entry's record is 46 bytes and its
 * name, far below this in any export, and the entries recon keeps stay within that many bytes.
 */
export const ZIP_DIRECTORY_BYTES_PER_ENTRY = 1024;

/** How many bytes at the end of a file can hold the end record and the zip64 locator before it. */
export const ZIP_TAIL_BYTES = ZIP64_LOCATOR_BYTES + END_BYTES + MAX_COMMENT_BYTES;

/**
 * Finds the end record in `tail` (the file's last bytes, starting at `tailStart`): the last signature whose comment
 * fits in the file, as Go's and Python's zip readers take it. Bytes after the comment (a transfer's padding) are
 * not part of the archive: `end` says where it ends.
 *
 * The archive is zip64 when the end record says so, a field saturated (0xffff entries, 0xffffffff bytes or offset),
 * and a zip64 locator precedes it, as Go and Info-ZIP read it. Bytes before an end record whose fields are all real
 * are not looked at, whatever they hold: the last bytes of the directory (an entry's comment, say) may well start
 * with the locator's signature and hold anything after it (Go's TestIssue12449 archive). A locator that says 0 disks
 * in all, as some writers put it, means the one disk, as 1 does.
 */
export function parseZipEndRecord(tail: Buffer, tailStart: number, label: string): ZipEndRecord {
  let at = tail.length - END_BYTES;
  while (
    at >= 0 &&
    (tail.readUInt32LE(at) !== END_SIGNATURE || at + END_BYTES + tail.readUInt16LE(at + 20) > tail.length)
  )
    at--;
  if (at < 0) throw corrupt(label, 'no end of central directory record');
  const end = tailStart + at + END_BYTES + tail.readUInt16LE(at + 20);
  const record = {
    entryCount: tail.readUInt16LE(at + 10),
    directorySize: tail.readUInt32LE(at + 12),
    directoryOffset: tail.readUInt32LE(at + 16),
    offset: tailStart + at,
    end,
  };
  const saysZip64 =
    record.entryCount === 0xffff || record.directorySize === 0xffffffff || record.directoryOffset === 0xffffffff;
  const hasLocator =
    saysZip64 && at >= ZIP64_LOCATOR_BYTES && tail.readUInt32LE(at - ZIP64_LOCATOR_BYTES) === ZIP64_LOCATOR_SIGNATURE;
  if (!hasLocator) {
    if (
      tail.readUInt16LE(at + 4) !== 0 ||
      tail.readUInt16LE(at + 6) !== 0 ||
      tail.readUInt16LE(at + 8) !== record.entryCount
    ) {
      throw corrupt(label, 'a multi-disk archive');
    }
    return { ...record, zip64RecordOffset: null, zip64LocatorOffset: null };
  }
  const locator = at - ZIP64_LOCATOR_BYTES;
  // 0 or 1 disks in all: one.
  const totalDisks = tail.readUInt32LE(locator + 16);
  if (tail.readUInt32LE(locator + 4) !== 0 || totalDisks > 1) throw corrupt(label, 'a multi-disk zip64 archive');
  const zip64RecordOffset = tail.readBigUInt64LE(locator + 8);
  const locatorOffset = tailStart + locator;
  if (zip64RecordOffset + BigInt(ZIP64_RECORD_BYTES) > BigInt(locatorOffset)) {
    throw corrupt(
      label,
      `the zip64 end record at ${zip64RecordOffset} does not fit before its locator at ${locatorOffset}`,
    );
  }
  return { ...record, zip64RecordOffset: Number(zip64RecordOffset), zip64LocatorOffset: locatorOffset };
}

/**
 * The zip64 end record (`bytes`, ZIP64_RECORD_BYTES of them read at `end.zip64RecordOffset`): it must end at the
 * locator, and every field the zip32 end record did not saturate must agree with it.
 */
export function parseZip64EndRecord(bytes: Buffer, end: ZipEndRecord, label: string): ZipEndRecord {
  if (end.zip64RecordOffset === null || end.zip64LocatorOffset === null) return end;
  if (bytes.length < ZIP64_RECORD_BYTES || bytes.readUInt32LE(0) !== ZIP64_RECORD_SIGNATURE) {
    throw corrupt(label, `no zip64 end record where its locator points (${end.zip64RecordOffset})`);
  }
  const recordEnd = BigInt(end.zip64RecordOffset + ZIP64_RECORD_SIZE_EXCLUDED) + bytes.readBigUInt64LE(4);
  if (recordEnd !== BigInt(end.zip64LocatorOffset))
    throw corrupt(label, 'the zip64 end record does not end at its locator');
  if (bytes.readUInt32LE(16) !== 0 || bytes.readUInt32LE(20) !== 0) throw corrupt(label, 'a multi-disk zip64 archive');
  const entriesOnDisk = bytes.readBigUInt64LE(24);
  const entryCount = bytes.readBigUInt64LE(32);
  const directorySize = bytes.readBigUInt64LE(40);
  const directoryOffset = bytes.readBigUInt64LE(48);
  if (entriesOnDisk !== entryCount) throw corrupt(label, 'a multi-disk zip64 archive');
  const agrees = (zip32: number, saturated: number, zip64: bigint) => zip32 === saturated || BigInt(zip32) === zip64;
  if (
    !agrees(end.entryCount, 0xffff, entryCount) ||
    !agrees(end.directorySize, 0xffffffff, directorySize) ||
    !agrees(end.directoryOffset, 0xffffffff, directoryOffset)
  ) {
    throw corrupt(label, 'the zip64 end record contradicts the end of central directory record');
  }
  // Past the record's own offset nothing is true of these: the directory is checked against it next.
  const bound = BigInt(end.zip64RecordOffset);
  if (entryCount > bound || directorySize > bound || directoryOffset > bound) {
    throw corrupt(
      label,
      `the zip64 end record puts the directory (${directorySize} bytes, ${entryCount} entries) at ${directoryOffset}, past the end of the file`,
    );
  }
  return {
    ...end,
    entryCount: Number(entryCount),
    directorySize: Number(directorySize),
    directoryOffset: Number(directoryOffset),
  };
}

/**
 * The directory of the (zip64-resolved) end record, checked: within the file before its end records, large enough
 * for its entries' fixed headers, and within the limits of entries and bytes.
 */
export function checkZipDirectory(
  end: ZipEndRecord,
  limits: Pick<IngestLimits, 'maxZipEntries'>,
  label: string,
): ZipDirectoryLocation {
  const { entryCount, directorySize: size, directoryOffset: offset } = end;
  const endRecords = end.zip64RecordOffset ?? end.offset;
  if (offset + size > endRecords) {
    throw corrupt(
      label,
      `the central directory (${size} bytes at ${offset}) runs past the end records at ${endRecords}`,
    );
  }
  if (size < entryCount * CENTRAL_HEADER_BYTES || size > Math.max(entryCount, 1) * MAX_CENTRAL_HEADER_BYTES) {
    throw corrupt(label, `a central directory of ${size} bytes cannot be the ${entryCount} entries it declares`);
  }
  const { maxZipEntries } = limits;
  if (entryCount > maxZipEntries) {
    throw new ReconError(
      'LIMIT_EXCEEDED',
      `${label}: the zip declares ${entryCount} entries, more than the ${maxZipEntries} allowed (RECON_MAX_ZIP_ENTRIES)`,
    );
  }
  const maxSize = maxZipEntries * ZIP_DIRECTORY_BYTES_PER_ENTRY;
  if (size > maxSize) {
    throw new ReconError(
      'LIMIT_EXCEEDED',
      `${label}: the zip's central directory takes ${size} bytes, more than the ${maxSize} allowed ` +
        `(${ZIP_DIRECTORY_BYTES_PER_ENTRY} bytes for each of the RECON_MAX_ZIP_ENTRIES)`,
    );
  }
  return { entryCount, offset, size, archiveEnd: end.end };
}

export function corrupt(label: string, detail: string): ReconError {
  return new ReconError('ARCHIVE_CORRUPT', `${label}: not a readable zip archive, truncated or corrupt (${detail})`);
}
