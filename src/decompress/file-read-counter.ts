import { createReadStream, type ReadStream } from 'node:fs';

/**
 * How many bytes of one export file its streams have read, as delivered (compressed): the share of the file
 * a progress bar can show. The decompressors cannot say how far into their input they are, but every byte
 * they consume comes through a read stream opened here, and a ReadStream counts its own bytes, so asking
 * costs nothing on the hot path.
 */
export class FileReadCounter {
  readonly filePath: string;
  readonly #open = new Set<ReadStream>();
  #closedBytes = 0;

  constructor(filePath: string) {
    this.filePath = filePath;
  }

  /** A read stream of the file (or of the byte range `start`..`end`, inclusive) whose bytes are counted. */
  read(options: { highWaterMark: number; start?: number; end?: number }): ReadStream {
    const stream = createReadStream(this.filePath, options);
    this.#open.add(stream);
    stream.once('close', () => {
      this.#open.delete(stream);
      this.#closedBytes += stream.bytesRead;
    });
    return stream;
  }

  get bytesRead(): number {
    let total = this.#closedBytes;
    for (const stream of this.#open) total += stream.bytesRead;
    return total;
  }
}
