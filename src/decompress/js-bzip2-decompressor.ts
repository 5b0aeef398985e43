import { Transform } from 'node:stream';
import unbzip2Stream from 'unbzip2-stream';

/**
 * An empty bzip2 stream (header, end-of-stream marker, crc 0), written after the input: a file that ends
 * where a stream ends decodes it as nothing, while bytes after the last stream that do not start another one
 * now fail the next stream's header check even when fewer than four, instead of running the decoder out of
 * input, which looks like a truncated stream.
 */
const EMPTY_STREAM = Buffer.from([0x42, 0x5a, 0x68, 0x39, 0x17, 0x72, 0x45, 0x38, 0x50, 0x90, 0x00, 0x00, 0x00, 0x00]);
/** What unbzip2-stream's header check throws: no `BZh` magic, or no block size digit after it. */
const HEADER_ERRORS = new Set(['No magic number found', 'Not a BZIP archive']);

/**
 * unbzip2-stream (pure JavaScript, used when no bzip2 binary is installed) as a proper Transform.
 * Piped directly, its old-style `through` stream ended pipelines with ERR_STREAM_PREMATURE_CLOSE, and its
 * failures arrive as stray 'error' events with messages like "Cannot read properties of undefined".
 * Driven by hand it works synchronously: each write emits the blocks it completes, and an error is
 * returned from the write that caused it (the caller turns it into ARCHIVE_CORRUPT). It reads concatenated
 * streams (pbzip2, lbzip2) and reports an input that stops inside a stream.
 *
 * Bytes after the last stream that do not start another are ignored, as bzip2 and lbzip2 do, and
 * `onTrailingBytes` is told (bzip2 warns). The decoder checks a header only at the start of the file and after
 * a stream whose crc matched, so a header error past a good first header means exactly that.
 */
export function createJsBzip2Decompressor(onTrailingBytes: () => void = () => {}): Transform {
  const decoder = unbzip2Stream();
  let failure: Error | null = null;
  let trailing = false;
  let head = Buffer.alloc(0);
  const output = new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      if (head.length < 4) head = Buffer.concat([head, chunk.subarray(0, 4 - head.length)]);
      // Once the trailing bytes are known, the rest of the file is read and dropped, not queued in the decoder.
      if (!trailing) decoder.write(chunk);
      callback(failure);
    },
    flush(callback) {
      if (failure === null && !trailing) {
        decoder.write(EMPTY_STREAM);
        if (!trailing) decoder.end();
      }
      if (trailing && failure === null) onTrailingBytes();
      callback(failure);
    },
  });
  decoder.on('data', (data: Buffer) => output.push(data));
  decoder.on('error', (error: Error) => {
    if (failure !== null || trailing) return;
    if (HEADER_ERRORS.has(error.message) && hasValidHeader(head)) trailing = true;
    else failure = explain(error);
  });
  return output;
}

function hasValidHeader(head: Buffer): boolean {
  return head.length === 4 && head.toString('latin1', 0, 3) === 'BZh' && head[3]! >= 0x31 && head[3]! <= 0x39;
}

/**
 * The decoder's own messages are jokes ("meow i'm a kitty, that's an error"), and running out of input shows
 * up as a TypeError from its bit reader; keep the crc message, which means something.
 */
function explain(error: Error): Error {
  if (error instanceof TypeError) return new Error('the data ends unexpectedly', { cause: error });
  if (/crc/i.test(error.message) || error.message === 'input stream ended prematurely') return error;
  return new Error('invalid bzip2 data', { cause: error });
}
