export type Compression = 'zip' | 'gzip' | 'bzip2' | 'none';

/** How many leading bytes `detectCompression` looks at. */
export const COMPRESSION_MAGIC_BYTES = 4;

/**
 * The container format, from the file's first bytes only: the name of a delivered file says nothing
 * reliable (a callback may store a gzip as `.csv`). `PK\x05\x06` is the end record an empty zip consists of.
 */
export function detectCompression(head: Buffer): Compression {
  if (
    head[0] === 0x50 &&
    head[1] === 0x4b &&
    ((head[2] === 0x03 && head[3] === 0x04) || (head[2] === 0x05 && head[3] === 0x06))
  ) {
    return 'zip';
  }
  if (head[0] === 0x1f && head[1] === 0x8b) return 'gzip';
  if (head[0] === 0x42 && head[1] === 0x5a && head[2] === 0x68) return 'bzip2';
  return 'none';
}
