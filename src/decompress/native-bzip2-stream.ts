import { spawn } from 'node:child_process';
import path from 'node:path';
import { pipeline, Transform, type Readable } from 'node:stream';
import { ReconError } from '../errors.ts';
import { chainStreams } from './chain-streams.ts';
import { oneLine } from './archive-error.ts';

/**
 * bzip2 writes its output 5,000 bytes at a time, so the pipe delivers some 35,000 chunks for 1M rows;
 * regrouping them spares every later stage (metering, decoding, scanning) that per-chunk cost.
 */
const COALESCE_BYTES = 64 * 1024;

/** Enough of the child's stderr for its first message; the rest is noise ("You can use bzip2recover..."). */
const STDERR_KEEP_CHARS = 2048;

/**
 * Decompresses with a bzip2 binary (`lbzip2` or `bzip2 -dc`), about five times faster than the JavaScript
 * decoder and reading concatenated streams. The compressed bytes are piped to the child's stdin from
 * `compressed` (a counted read of the file, so progress can tell how far in it is). The output ends only
 * after the child has exited: a non-zero exit (truncated or corrupt data) fails the stream instead of looking
 * like a short file. A consumer that stops early, or a failure anywhere, kills the child and stops the read.
 * What the child says on stderr while succeeding goes to `onWarning`, its program name first.
 */
export function openNativeBzip2Stream(
  executable: string,
  compressed: Readable,
  label: string,
  onWarning: (detail: string) => void = () => {},
): Readable {
  const program = path.basename(executable);
  const child = spawn(executable, ['-d', '-c'], { stdio: ['pipe', 'pipe', 'pipe'] });
  // Everything below is synchronous: a small file's child can exit and close during an await, and a 'close'
  // missed by an unattached listener would leave the output waiting forever.
  let readError: Error | undefined;
  compressed.once('error', (error) => (readError ??= error));
  // A child that exits early (corrupt data) breaks the pipe; its exit status is the error worth reporting.
  pipeline(compressed, child.stdin, () => {});
  let stderr = '';
  // stderr only carries messages: a failing pipe there loses one, and the exit status still decides.
  child.stderr.on('error', () => {});
  child.stderr.setEncoding('utf8');
  child.stderr.on('data', (text: string) => {
    if (stderr.length < STDERR_KEEP_CHARS) stderr += text;
  });
  let pending: Buffer[] = [];
  let pendingBytes = 0;
  const exited = new Promise<Error | null>((resolve) => {
    // `on`, not `once`: a child can emit 'error' again (a failed kill), and an unheard 'error' throws.
    child.on('error', (error) =>
      resolve(
        new ReconError('FILE_UNREADABLE', `${label}: cannot run ${program} (${error.message})`, { cause: error }),
      ),
    );
    child.once('close', (code, signal) => {
      if (readError !== undefined) resolve(readError);
      else if (code === 0) {
        // A message on success is a warning (bzip2: "trailing garbage after EOF ignored").
        const warning = firstMessage(stderr, program);
        if (warning !== '') onWarning(`${program}: ${warning}`);
        resolve(null);
      } else
        resolve(
          new ReconError(
            'ARCHIVE_CORRUPT',
            `${label}: truncated or corrupt bzip2 data (${program}: ${describeFailure(stderr, program, code, signal)})`,
          ),
        );
    });
  });
  const untilExit = new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      pending.push(chunk);
      pendingBytes += chunk.length;
      if (pendingBytes >= COALESCE_BYTES) {
        this.push(Buffer.concat(pending, pendingBytes));
        pending = [];
        pendingBytes = 0;
      }
      callback();
    },
    flush(callback) {
      if (pendingBytes > 0) this.push(Buffer.concat(pending, pendingBytes));
      // exited never rejects: it resolves with the child's error, which the callback hands to the stream.
      void exited.then(callback);
    },
  });
  untilExit.once('close', () => {
    compressed.destroy();
    if (child.exitCode === null && child.signalCode === null) child.kill();
  });
  return chainStreams([child.stdout, untilExit]);
}

function describeFailure(stderr: string, program: string, code: number | null, signal: NodeJS.Signals | null): string {
  const first = firstMessage(stderr, program);
  if (first !== '') return first.replace(/;$/, '');
  return signal === null ? `exit code ${code}` : `killed by ${signal}`;
}

/** The child's first line, without its program name and the `(stdin): ` it names its input by. */
function firstMessage(stderr: string, program: string): string {
  // bzip2 starts its messages with an empty line.
  return oneLine(stderr.split('\n').find((line) => line.trim() !== '') ?? '')
    .replace(`${program}: `, '')
    .replace(/^\(stdin\): /, '');
}
