import { open } from 'node:fs/promises';
import path from 'node:path';
import { Readable } from 'node:stream';
import { createInflateRaw } from 'node:zlib';
import StreamZip from 'node-stream-zip';
import { ReconError } from '../errors.ts';
import { chainStreams } from './chain-streams.ts';
import { Crc32Check } from './crc32-check.ts';
import type { FileReadCounter } from './file-read-counter.ts';
import { oneLine } from './archive-error.ts';

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

export const ZIP_STORED = 0;
export const ZIP_DEFLATED = 8;

const LOCAL_HEADER_BYTES = 30;
const LOCAL_HEADER_SIGNATURE = 0x04034b50;
const READ_CHUNK_BYTES = 256 * 1024;
const INFLATE_CHUNK_BYTES = 64 * 1024;

/**
 * The entries of a zip's central directory, in order. node-stream-zip reads the directory (random access,
 * zip64, comments); the sizes and crc come from there, never from local headers, which is what makes entries
 * written with data descriptors (zero sizes in the local header) readable.
 */
export async function readZipDirectory(filePath: string, label: string): Promise<ZipDirectoryEntry[]> {
  const handle = await open(filePath, 'r');
  try {
    const zip = new StreamZip.async({ fd: handle.fd, storeEntries: false, skipEntryNameValidation: true });
    const entries: ZipDirectoryEntry[] = [];
    zip.on('entry', (entry) => {
      entries.push({
        name: entry.name,
        isDirectory: entry.isDirectory,
        encrypted: entry.encrypted,
        method: entry.method,
        compressedSize: entry.compressedSize,
        size: entry.size,
        crc: entry.crc,
        offset: entry.offset,
      });
    });
    // Resolves once the whole directory has been read.
    await zip.entriesCount;
    return entries;
  } catch (error) {
    const detail = error instanceof Error ? oneLine(error.message) : String(error);
    throw new ReconError('ARCHIVE_CORRUPT', `${label}: not a readable zip archive, truncated or corrupt (${detail})`, { cause: error });
  } finally {
    await handle.close();
  }
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

/** The decompressed bytes of one entry, checked against the directory's crc-32 and size at the end. */
export async function openZipEntry(file: FileReadCounter, entry: ZipDirectoryEntry, label: string): Promise<Readable> {
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
  const compressed = entry.compressedSize === 0
    ? Readable.from([])
    : file.read({ start: dataStart, end: dataStart + entry.compressedSize - 1, highWaterMark: READ_CHUNK_BYTES });
  const check = new Crc32Check(entry.crc, entry.size, label);
  return entry.method === ZIP_DEFLATED
    ? chainStreams([compressed, createInflateRaw({ chunkSize: INFLATE_CHUNK_BYTES }), check])
    : chainStreams([compressed, check]);
}
