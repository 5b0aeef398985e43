import { Transform } from 'node:stream';
import unbzip2Stream from 'unbzip2-stream';

/**
 * unbzip2-stream (pure JavaScript, used when no bzip2 binary is installed) as a proper Transform.
 * Piped directly, its old-style `through` stream ended pipelines with ERR_STREAM_PREMATURE_CLOSE, and its
 * failures arrive as stray 'error' events with messages like "Cannot read properties of undefined".
 * Driven by hand it works synchronously: each write emits the blocks it completes, and an error is
 * returned from the write that caused it (the caller turns it into ARCHIVE_CORRUPT). It reads concatenated
 * streams (pbzip2, lbzip2) and reports an input that stops inside a stream.
 */
export function createJsBzip2Decompressor(): Transform {
  const decoder = unbzip2Stream();
  let failure: Error | null = null;
  const output = new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      decoder.write(chunk);
      callback(failure);
    },
    flush(callback) {
      if (failure === null) decoder.end();
      callback(failure);
    },
  });
  decoder.on('data', (data: Buffer) => output.push(data));
  decoder.on('error', (error: Error) => {
    failure ??= explain(error);
  });
  return output;
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
