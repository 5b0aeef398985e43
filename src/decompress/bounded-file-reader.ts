import type { FileHandle } from 'node:fs/promises';
import { RandomAccessReader } from 'yauzl';

type ReadCallback = (error: Error | null, bytesRead?: number) => void;

/**
 * The file as yauzl reads it, by random access: a read outside the file's `size` bytes fails through its callback
 * (fs.read would throw a RangeError from inside yauzl's callbacks, where nothing catches it, for an offset past
 * 2^53), and an exception thrown by the code a read calls back (yauzl's, and the listeners it calls) goes to
 * `onFailure` instead of escaping as an uncaught exception. The handle belongs to the caller, who closes it.
 */
export class BoundedFileReader extends RandomAccessReader {
  readonly #handle: FileHandle;
  readonly #size: number;
  readonly #onFailure: (error: Error) => void;

  constructor(handle: FileHandle, size: number, onFailure: (error: Error) => void) {
    super();
    this.#handle = handle;
    this.#size = size;
    this.#onFailure = onFailure;
  }

  override read(buffer: Buffer, offset: number, length: number, position: number, callback: ReadCallback): void {
    const inFile =
      Number.isSafeInteger(position) &&
      Number.isSafeInteger(length) &&
      position >= 0 &&
      length >= 0 &&
      position + length <= this.#size &&
      offset >= 0 &&
      offset + length <= buffer.length;
    if (!inFile) {
      const error = new Error(`a read of ${length} bytes at ${position} falls outside the file's ${this.#size} bytes`);
      setImmediate(() => this.#deliver(callback, error));
      return;
    }
    this.#handle.read(buffer, offset, length, position).then(
      ({ bytesRead }) => this.#deliver(callback, null, bytesRead),
      (error: unknown) => this.#deliver(callback, error instanceof Error ? error : new Error(String(error))),
    );
  }

  override close(callback: (error: Error | null) => void): void {
    setImmediate(() => callback(null));
  }

  #deliver(callback: ReadCallback, error: Error | null, bytesRead?: number): void {
    try {
      callback(error, bytesRead);
    } catch (thrown) {
      this.#onFailure(thrown instanceof Error ? thrown : new Error(String(thrown)));
    }
  }
}
