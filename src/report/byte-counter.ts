import { Transform, type TransformCallback } from 'node:stream';

/** Passes chunks through unchanged and reports their sizes: what a progress bar reads. */
export class ByteCounter extends Transform {
  readonly #onBytes: (count: number) => void;

  constructor(onBytes: (count: number) => void) {
    super();
    this.#onBytes = onBytes;
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    this.#onBytes(chunk.length);
    callback(null, chunk);
  }
}
