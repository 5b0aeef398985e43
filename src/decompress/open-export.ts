import { open, stat } from 'node:fs/promises';
import type { Readable } from 'node:stream';
import { createGunzip } from 'node:zlib';
import type { IngestLimits } from '../config/config.ts';
import { ReconError } from '../errors.ts';
import { describeArchiveError, entryLabel, fileErrorDetail } from './archive-error.ts';
import { chainStreams } from './chain-streams.ts';
import { DecompressedByteBudget, MeteredStream } from './decompressed-byte-budget.ts';
import { COMPRESSION_MAGIC_BYTES, detectCompression, type Compression } from './detect-compression.ts';
import { FileReadCounter } from './file-read-counter.ts';
import { findExecutable } from './find-executable.ts';
import { createJsBzip2Decompressor } from './js-bzip2-decompressor.ts';
import { openNativeBzip2Stream } from './native-bzip2-stream.ts';
import {
  isCsvEntry,
  openZipEntry,
  readZipDirectory,
  ZIP_DEFLATED,
  ZIP_STORED,
  type ZipDirectoryEntry,
} from './zip-archive.ts';

export interface CsvEntrySource {
  /** The zip entry's name; null for gzip, bzip2 and plain csv. */
  readonly name: string | null;
  /** How messages name this csv: the file's name (OpenExportOptions.name), plus the entry for a zip. Pass it to parseCsv. */
  readonly label: string;
  /** The decompressed csv bytes. Errors (corrupt data, limits) may surface while the stream is read. */
  open(): Promise<Readable>;
}

export interface OpenedExport {
  readonly compression: Compression;
  readonly sizeBytes: number;
  /** The csv entries, in archive order; can be iterated more than once. */
  readonly entries: AsyncIterable<CsvEntrySource>;
  /** Bytes of the file (as delivered, compressed) read so far by the entries' streams: how far in the load is. */
  bytesRead(): number;
  /** Destroys every stream opened from this export that is still open. */
  close(): Promise<void>;
}

export interface OpenExportOptions {
  /**
   * How messages name the file: what recon.files calls it (a delivery's name, not the temporary path it was spooled
   * to). The path by default.
   */
  readonly name?: string;
  /**
   * How bzip2 is decompressed: `auto` uses `lbzip2` or `bzip2` from PATH when present and the JavaScript
   * decoder otherwise; `native` and `js` force one (tests exercise both paths).
   */
  readonly bzip2Decoder?: 'auto' | 'native' | 'js';
  /**
   * Told, in one line naming the file, what was accepted with a warning: bytes after the end of a zip archive, or
   * after the last bzip2 stream (which bzip2 and the JavaScript decoder report and lbzip2 ignores silently).
   */
  readonly onWarning?: (message: string) => void;
}

/** Larger reads than the 64 KiB default: fewer chunks through every stage of the pipeline. */
const READ_CHUNK_BYTES = 256 * 1024;
const INFLATE_CHUNK_BYTES = 64 * 1024;
const NATIVE_BZIP2_PROGRAMS = ['lbzip2', 'bzip2'];

/**
 * Opens an export file as delivered: checks it is a non-empty regular file within the size limit, detects
 * the compression from its first bytes and, for a zip, reads the directory (so a corrupt, encrypted or empty
 * zip fails here, before anything is loaded). Every stream it hands out counts decompressed bytes against the
 * limits. Errors are ReconErrors whose one-line message names the file (and the zip entry).
 */
export async function openExport(
  filePath: string,
  limits: IngestLimits,
  options: OpenExportOptions = {},
): Promise<OpenedExport> {
  const name = options.name ?? filePath;
  const sizeBytes = await regularFileSize(filePath, name);
  if (sizeBytes > limits.maxFileBytes) {
    throw new ReconError(
      'LIMIT_EXCEEDED',
      `${name}: ${sizeBytes} bytes, more than the ${limits.maxFileBytes} allowed (RECON_MAX_FILE_BYTES)`,
    );
  }
  const compression = detectCompression(await readHead(filePath, name));
  const budget = new DecompressedByteBudget(limits, sizeBytes, name);
  const file = new FileReadCounter(filePath);
  const openStreams = new Set<Readable>();
  const track = (stream: Readable): Readable => {
    openStreams.add(stream);
    stream.once('close', () => openStreams.delete(stream));
    return stream;
  };

  let sources: CsvEntrySource[];
  if (compression === 'zip') {
    sources = await zipSources(file, name, limits, budget, track, options);
  } else {
    const open = await singleStreamOpener(compression, file, name, options);
    sources = [
      {
        name: null,
        label: name,
        open: async () =>
          track(
            chainStreams([
              await open(),
              new MeteredStream(budget, describeArchiveError(compression === 'none' ? 'csv' : compression, name)),
            ]),
          ),
      },
    ];
  }

  return {
    compression,
    sizeBytes,
    entries: {
      async *[Symbol.asyncIterator]() {
        yield* sources;
      },
    },
    bytesRead: () => file.bytesRead,
    async close() {
      for (const stream of openStreams) stream.destroy();
    },
  };
}

async function regularFileSize(filePath: string, name: string): Promise<number> {
  let stats;
  try {
    stats = await stat(filePath);
  } catch (error) {
    throw new ReconError('FILE_UNREADABLE', `${name}: cannot read the file (${fileErrorDetail(error)})`, {
      cause: error,
    });
  }
  if (!stats.isFile()) throw new ReconError('FILE_UNREADABLE', `${name}: not a regular file`);
  if (stats.size === 0) throw new ReconError('FILE_EMPTY', `${name}: the file is empty (0 bytes)`);
  return stats.size;
}

async function readHead(filePath: string, name: string): Promise<Buffer> {
  try {
    const handle = await open(filePath, 'r');
    try {
      const head = Buffer.alloc(COMPRESSION_MAGIC_BYTES);
      const { bytesRead } = await handle.read(head, 0, head.length, 0);
      return head.subarray(0, bytesRead);
    } finally {
      await handle.close();
    }
  } catch (error) {
    throw new ReconError('FILE_UNREADABLE', `${name}: cannot read the file (${fileErrorDetail(error)})`, {
      cause: error,
    });
  }
}

/** Opens the raw (not yet metered) decompressed stream of a gzip, bzip2 or plain file. */
async function singleStreamOpener(
  compression: Exclude<Compression, 'zip'>,
  file: FileReadCounter,
  label: string,
  options: OpenExportOptions,
): Promise<() => Promise<Readable>> {
  const read = () => file.read({ highWaterMark: READ_CHUNK_BYTES });
  switch (compression) {
    case 'none':
      return async () => read();
    case 'gzip':
      // createGunzip reads every member of a multi-member file (pigz, concatenated exports).
      return async () => chainStreams([read(), createGunzip({ chunkSize: INFLATE_CHUNK_BYTES })]);
    case 'bzip2': {
      const executable = await bzip2Executable(options.bzip2Decoder ?? 'auto');
      const warn = (detail: string) => options.onWarning?.(`${label}: ${detail}`);
      if (executable === undefined) {
        return async () =>
          chainStreams([read(), createJsBzip2Decompressor(() => warn('bytes after the last bzip2 stream ignored'))]);
      }
      return async () => openNativeBzip2Stream(executable, read(), label, warn);
    }
  }
}

let nativeBzip2Lookup: Promise<string | undefined> | undefined;

async function bzip2Executable(decoder: 'auto' | 'native' | 'js'): Promise<string | undefined> {
  if (decoder === 'js') return undefined;
  nativeBzip2Lookup ??= findExecutable(NATIVE_BZIP2_PROGRAMS);
  const executable = await nativeBzip2Lookup;
  if (executable === undefined && decoder === 'native') {
    throw new ReconError('CONFIG', `no ${NATIVE_BZIP2_PROGRAMS.join(' or ')} on PATH for native bzip2 decompression`);
  }
  return executable;
}

async function zipSources(
  file: FileReadCounter,
  name: string,
  limits: IngestLimits,
  budget: DecompressedByteBudget,
  track: (stream: Readable) => Readable,
  options: OpenExportOptions,
): Promise<CsvEntrySource[]> {
  const { entries: all, offset: directoryOffset } = await readZipDirectory(
    file.filePath,
    limits,
    name,
    options.onWarning,
  );
  const csvEntries = all.filter(isCsvEntry);
  if (csvEntries.length === 0) {
    const what = all.length === 0 ? 'no entries at all' : `only ${all.length} directory or metadata entries`;
    throw new ReconError('ARCHIVE_EMPTY', `${name}: the zip holds no csv entry (${what})`);
  }
  checkNamesUnique(name, csvEntries);
  for (const entry of csvEntries) checkReadable(entry, entryLabel(name, entry.name));
  // The directory's sizes can be judged before inflating anything; the metered stream still counts the real
  // bytes, since a crafted directory can understate them.
  const declared = budget.check(csvEntries.reduce((sum, entry) => sum + entry.size, 0));
  if (declared) throw declared;
  return csvEntries.map((entry) => {
    const label = entryLabel(name, entry.name);
    return {
      name: entry.name,
      label,
      open: async () =>
        track(
          chainStreams([
            await openZipEntry(file, entry, directoryOffset, label),
            new MeteredStream(budget, describeArchiveError('zip', label)),
          ]),
        ),
    };
  });
}

/**
 * Two csv entries under one name: an extractor keeps one of them (which one depends on the tool), and the
 * lineage of a row (file, entry, line) could not say which it came from. No exporter writes that; refuse it.
 */
function checkNamesUnique(fileName: string, entries: readonly ZipDirectoryEntry[]): void {
  const seen = new Set<string>();
  for (const { name } of entries) {
    if (seen.has(name)) {
      throw new ReconError(
        'ARCHIVE_CORRUPT',
        `${entryLabel(fileName, name)}: the zip holds two entries of this name, so which one is the export is ambiguous`,
      );
    }
    seen.add(name);
  }
}

function checkReadable(entry: ZipDirectoryEntry, label: string): void {
  if (entry.encrypted) {
    throw new ReconError(
      'ARCHIVE_ENCRYPTED',
      `${label}: the entry is encrypted (password-protected exports cannot be read)`,
    );
  }
  if (entry.method !== ZIP_STORED && entry.method !== ZIP_DEFLATED) {
    throw new ReconError(
      'ARCHIVE_CORRUPT',
      `${label}: unsupported zip compression method ${entry.method} (only stored and deflated entries are read)`,
    );
  }
}
