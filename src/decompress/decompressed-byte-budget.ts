import { Transform, type TransformCallback } from 'node:stream';
import type { IngestLimits } from '../config/config.ts';
import { ReconError } from '../errors.ts';

/**
 * Below this many decompressed bytes the ratio is not judged: a 2 KB export that inflates to 500 KB has a
 * high ratio and is harmless.
 */
export const RATIO_CHECK_FLOOR_BYTES = 1024 * 1024;

/**
 * Counts the decompressed bytes of one export file (all its zip entries together) against the limits, so a
 * zip bomb is stopped after a few MB of inflating instead of filling memory or disk.
 */
export class DecompressedByteBudget {
  readonly #limits: IngestLimits;
  readonly #compressedBytes: number;
  readonly #label: string;
  #total = 0;

  constructor(limits: IngestLimits, compressedBytes: number, label: string) {
    this.#limits = limits;
    this.#compressedBytes = compressedBytes;
    this.#label = label;
  }

  /** Counts `bytes` more; the error to fail with when a limit is crossed. */
  consume(bytes: number): ReconError | undefined {
    this.#total += bytes;
    return this.check(this.#total);
  }

  /** Checks a size without counting it (sizes an archive declares before anything is inflated). */
  check(totalBytes: number): ReconError | undefined {
    const { maxUncompressedBytes, maxCompressionRatio } = this.#limits;
    if (totalBytes > maxUncompressedBytes) {
      return new ReconError(
        'LIMIT_EXCEEDED',
        `${this.#label}: decompresses to more than ${maxUncompressedBytes} bytes (RECON_MAX_UNCOMPRESSED_BYTES)`,
      );
    }
    if (totalBytes > RATIO_CHECK_FLOOR_BYTES && totalBytes > maxCompressionRatio * this.#compressedBytes) {
      return new ReconError(
        'LIMIT_EXCEEDED',
        `${this.#label}: decompresses to more than ${maxCompressionRatio} times its ${this.#compressedBytes} bytes ` +
          '(a zip bomb? RECON_MAX_COMPRESSION_RATIO)',
      );
    }
    return undefined;
  }
}

/**
 * The last stage of every decompressed stream: counts bytes against the budget, and turns any error that
 * reaches it (from the file, the decompressor, the checks) into a one-line ReconError via `describe`.
 * `pipeline` destroys every stage with the first error, so the consumer sees the translated one.
 */
export class MeteredStream extends Transform {
  readonly #budget: DecompressedByteBudget;
  readonly #describe: (error: Error) => ReconError;

  constructor(budget: DecompressedByteBudget, describe: (error: Error) => ReconError) {
    super();
    this.#budget = budget;
    this.#describe = describe;
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    const exceeded = this.#budget.consume(chunk.length);
    if (exceeded) callback(exceeded);
    else callback(null, chunk);
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    callback(error === null || error instanceof ReconError ? error : this.#describe(error));
  }
}
