import { Transform, type TransformCallback } from 'node:stream';
import { crc32 } from 'node:zlib';
import { ReconError } from '../errors.ts';

/**
 * Checks a zip entry's decompressed bytes against the crc-32 and size of the central directory. Inflate
 * alone accepts many corruptions (a flipped byte in a stored entry, or in deflated data that still decodes),
 * and the zip libraries skip the check for entries written with a data descriptor.
 */
export class Crc32Check extends Transform {
  readonly #expectedCrc: number;
  readonly #expectedBytes: number;
  readonly #label: string;
  #crc = 0;
  #bytes = 0;

  constructor(expectedCrc: number, expectedBytes: number, label: string) {
    super();
    this.#expectedCrc = expectedCrc >>> 0;
    this.#expectedBytes = expectedBytes;
    this.#label = label;
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    this.#crc = crc32(chunk, this.#crc);
    this.#bytes += chunk.length;
    callback(null, chunk);
  }

  override _flush(callback: TransformCallback): void {
    if (this.#bytes !== this.#expectedBytes) {
      callback(
        new ReconError(
          'ARCHIVE_CORRUPT',
          `${this.#label}: corrupt entry (${this.#bytes} bytes instead of the ${this.#expectedBytes} the directory declares)`,
        ),
      );
    } else if (this.#crc >>> 0 !== this.#expectedCrc) {
      callback(new ReconError('ARCHIVE_CORRUPT', `${this.#label}: corrupt entry (crc-32 mismatch)`));
    } else {
      callback();
    }
  }
}
