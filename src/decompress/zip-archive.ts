import { open, type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import { Readable } from 'node:stream';
import { createInflateRaw } from 'node:zlib';
import yauzl, { type Entry } from 'yauzl';
import type { IngestLimits } from '../config/config.ts';
import { ReconError } from '../errors.ts';
import { BoundedFileReader } from './bounded-file-reader.ts';
import { chainStreams } from './chain-streams.ts';
import { Crc32Check } from './crc32-check.ts';
import type { FileReadCounter } from './file-read-counter.ts';
import { entryLabel, oneLine } from './archive-error.ts';
import { zipEntryName } from './zip-entry-name.ts';
import {
  checkZipDirectory,
  corrupt,
  parseZip64EndRecord,
  parseZipEndRecord,
  ZIP_TAIL_BYTES,
  ZIP64_RECORD_BYTES,
  type ZipDirectoryLocation,
} from './zip-end-records.ts';

export interface ZipDirectoryEntry {
  readonly name: string;
  readonly isDirectory: boolean;
  readonly encrypted: boolean;
  /** 0 stored, 8 deflated; anything else is not read. */
  readonly method: number;
  readonly compressedSize: number;
  readonly size: number;
  readonly crc: number;
  /** Offset of the entry's local header. */
  readonly offset: number;
}

export interface ZipDirectory {
  readonly entries: readonly ZipDirectoryEntry[];
  /** Where the central directory starts: every entry's local header and data end before it. */
  readonly offset: number;
}

export const ZIP_STORED = 0;
export const ZIP_DEFLATED = 8;

const LOCAL_HEADER_BYTES = 30;
const LOCAL_HEADER_SIGNATURE = 0x04034b50;
const CENTRAL_HEADER_BYTES = 46;
const READ_CHUNK_BYTES = 256 * 1024;
const INFLATE_CHUNK_BYTES = 64 * 1024;

/**
 * The entries of a zip's central directory, in order. The end records are read and checked first
 * (zip-end-records.ts), so the directory is within the file and within RECON_MAX_ZIP_ENTRIES before yauzl walks it,
 * one entry at a time, through a reader that refuses to leave the file. Each entry's local header and data must lie before the
 * directory. The sizes and crc come from the directory, never from local headers, which is what makes entries
 * written with data descriptors (zero sizes in the local header) readable.
 */
export async function readZipDirectory(
  filePath: string,
  limits: Pick<IngestLimits, 'maxZipEntries'>,
  label: string,
  onWarning: (message: string) => void = () => {},
): Promise<ZipDirectory> {
  const handle = await open(filePath, 'r');
  try {
    const { size } = await handle.stat();
    const location = await locateDirectory(handle, size, limits, label);
    if (location.archiveEnd < size)
      onWarning(`${label}: ${size - location.archiveEnd} bytes after the end of the zip archive ignored`);
    const entries = await walkDirectory(handle, location, label);
    return { entries, offset: location.offset };
  } catch (error) {
    if (error instanceof ReconError) throw error;
    const detail = error instanceof Error ? oneLine(error.message) : String(error);
    throw new ReconError('ARCHIVE_CORRUPT', `${label}: not a readable zip archive, truncated or corrupt (${detail})`, {
      cause: error,
    });
  } finally {
    await handle.close();
  }
}

async function locateDirectory(
  handle: FileHandle,
  size: number,
  limits: Pick<IngestLimits, 'maxZipEntries'>,
  label: string,
): Promise<ZipDirectoryLocation> {
  const tailBytes = Math.min(size, ZIP_TAIL_BYTES);
  const tail = await readExactly(handle, tailBytes, size - tailBytes);
  let end = parseZipEndRecord(tail, size - tailBytes, label);
  if (end.zip64RecordOffset !== null)
    end = parseZip64EndRecord(await readExactly(handle, ZIP64_RECORD_BYTES, end.zip64RecordOffset), end, label);
  return checkZipDirectory(end, limits, label);
}

async function readExactly(handle: FileHandle, length: number, position: number): Promise<Buffer> {
  const buffer = Buffer.alloc(length);
  const { bytesRead } = await handle.read(buffer, 0, length, position);
  return buffer.subarray(0, bytesRead);
}

/**
 * yauzl's entries (lazily: one read at a time), each checked against the directory's location. yauzl is handed the
 * directory located and checked here, and never reads the end records itself: it would take any zip64 locator's
 * signature before the end record for zip64, where the end record says otherwise (see parseZipEndRecord).
 */
function walkDirectory(
  handle: FileHandle,
  location: ZipDirectoryLocation,
  label: string,
): Promise<ZipDirectoryEntry[]> {
  if (location.entryCount === 0) return Promise.resolve([]);
  return new Promise((resolve, reject) => {
    const entries: ZipDirectoryEntry[] = [];
    let directoryBytes = 0;
    // The reader holds nothing to release (the handle is the caller's): the zip file is never closed.
    const reader = new BoundedFileReader(handle, location.archiveEnd, reject);
    // Lazy entries; no auto-close; names decoded (and refused when absolute or climbing out with ..), then read
    // again by zipEntryName; sizes checked against the bytes of every entry that is read (crc32-check.ts) only.
    const zip = new yauzl.ZipFile(
      reader,
      location.offset,
      location.archiveEnd,
      location.entryCount,
      '',
      false,
      true,
      true,
      false,
    );
    zip.on('error', reject);
    zip.on('end', () => resolve(entries));
    zip.on('entry', (entry: Entry) => {
      try {
        directoryBytes +=
          CENTRAL_HEADER_BYTES + entry.fileNameLength + entry.extraFieldLength + entry.fileCommentLength;
        if (directoryBytes > location.size)
          throw corrupt(label, `the directory's entries run past its declared ${location.size} bytes`);
        entries.push(directoryEntry(entry, location, label));
        zip.readEntry();
      } catch (thrown) {
        reject(thrown instanceof Error ? thrown : new Error(String(thrown)));
      }
    });
    zip.readEntry();
  });
}

function directoryEntry(entry: Entry, location: ZipDirectoryLocation, label: string): ZipDirectoryEntry {
  const name = zipEntryName(entry);
  // A local header and its data must fit before the directory; the exact end is checked once the header is read.
  if (entry.relativeOffsetOfLocalHeader + LOCAL_HEADER_BYTES + entry.compressedSize > location.offset) {
    throw new ReconError(
      'ARCHIVE_CORRUPT',
      `${entryLabel(label, name)}: corrupt zip (the entry's ${entry.compressedSize} bytes at ${entry.relativeOffsetOfLocalHeader} run past the start of the directory at ${location.offset})`,
    );
  }
  return {
    name,
    isDirectory: name.endsWith('/'),
    encrypted: entry.isEncrypted(),
    method: entry.compressionMethod,
    compressedSize: entry.compressedSize,
    size: entry.uncompressedSize,
    crc: entry.crc32,
    offset: entry.relativeOffsetOfLocalHeader,
  };
}

/**
 * A csv entry is every file entry except macOS resource forks (`__MACOSX/`) and hidden files (`.DS_Store`,
 * `._name`), which archivers add beside the real content. The name's extension is not required: the service's
 * entry names are not documented.
 */
export function isCsvEntry(entry: ZipDirectoryEntry): boolean {
  if (entry.isDirectory) return false;
  if (entry.name.startsWith('__MACOSX/')) return false;
  return !path.posix.basename(entry.name).startsWith('.');
}

/**
 * The decompressed bytes of one entry, checked against the directory's crc-32 and size at the end. Its data must
 * end before the directory at `directoryOffset`.
 */
export async function openZipEntry(
  file: FileReadCounter,
  entry: ZipDirectoryEntry,
  directoryOffset: number,
  label: string,
): Promise<Readable> {
  const header = Buffer.alloc(LOCAL_HEADER_BYTES);
  const handle = await open(file.filePath, 'r');
  let bytesRead: number;
  try {
    ({ bytesRead } = await handle.read(header, 0, LOCAL_HEADER_BYTES, entry.offset));
  } finally {
    await handle.close();
  }
  if (bytesRead < LOCAL_HEADER_BYTES || header.readUInt32LE(0) !== LOCAL_HEADER_SIGNATURE) {
    throw new ReconError('ARCHIVE_CORRUPT', `${label}: corrupt zip (no local header where the directory points)`);
  }
  // The local name and extra field may differ in length from the central directory's copies.
  const dataStart = entry.offset + LOCAL_HEADER_BYTES + header.readUInt16LE(26) + header.readUInt16LE(28);
  if (dataStart + entry.compressedSize > directoryOffset) {
    throw new ReconError('ARCHIVE_CORRUPT', `${label}: corrupt zip (the entry's data runs into the central directory)`);
  }
  const compressed =
    entry.compressedSize === 0
      ? Readable.from([])
      : file.read({ start: dataStart, end: dataStart + entry.compressedSize - 1, highWaterMark: READ_CHUNK_BYTES });
  const check = new Crc32Check(entry.crc, entry.size, label);
  return entry.method === ZIP_DEFLATED
    ? chainStreams([compressed, createInflateRaw({ chunkSize: INFLATE_CHUNK_BYTES }), check])
    : chainStreams([compressed, check]);
}
