import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { COMPRESSION_MAGIC_BYTES, detectCompression } from '../decompress/detect-compression.ts';
import { ReconError } from '../errors.ts';
import type { FileContent } from './files-repository.ts';

/** Size, sha256 and compression, from one streaming read; the content is read again by the load. Messages say `name`. */
export async function identifyFile(filePath: string, name = filePath): Promise<FileContent> {
  const stats = await stat(filePath);
  if (!stats.isFile()) throw new ReconError('FILE_UNREADABLE', `${name}: not a regular file`);
  const hash = createHash('sha256');
  let head: Buffer | undefined;
  for await (const chunk of createReadStream(filePath) as AsyncIterable<Buffer>) {
    head ??= chunk.subarray(0, COMPRESSION_MAGIC_BYTES);
    hash.update(chunk);
  }
  return { sha256: hash.digest('hex'), sizeBytes: stats.size, compression: detectCompression(head ?? Buffer.alloc(0)) };
}
