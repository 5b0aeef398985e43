import { randomBytes } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { rename, rm, stat } from 'node:fs/promises';
import { once } from 'node:events';
import path from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { ReconError } from '../errors.ts';

type Chunks = AsyncIterable<string> | Iterable<string>;

/** To stdout (or any stream), honouring backpressure: a million csv lines never pile up in memory. */
export async function writeToStream(chunks: Chunks, stream: NodeJS.WritableStream): Promise<void> {
  for await (const chunk of chunks) {
    if (!stream.write(chunk)) await once(stream, 'drain');
  }
}

/** Fails before any work when FILE's folder is missing: a report that cannot be saved is not worth computing. */
export async function checkOutputFolder(file: string): Promise<void> {
  const folder = path.dirname(path.resolve(file));
  const isFolder = await stat(folder).then(
    (stats) => stats.isDirectory(),
    () => false,
  );
  if (!isFolder) throw new ReconError('OUTPUT_UNWRITABLE', `cannot write ${file}: folder ${folder} does not exist`);
}

/**
 * Writes a temporary file beside FILE, flushes it to disk, then renames it over FILE: a reader (a mail job,
 * a share) sees the previous report or the new one, never half of one. On any failure the temporary file
 * is removed and FILE is untouched. Returns FILE's absolute path.
 */
export async function writeFileAtomically(file: string, chunks: Chunks): Promise<string> {
  const target = path.resolve(file);
  const temporary = path.join(
    path.dirname(target),
    `.${path.basename(target)}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`,
  );
  // Errors of the content (the database, an interrupt) are not errors of the file: they pass unchanged.
  let contentError: { error: unknown } | undefined;
  async function* content() {
    try {
      yield* chunks;
    } catch (error) {
      contentError = { error };
      throw error;
    }
  }
  try {
    await pipeline(Readable.from(content()), createWriteStream(temporary, { flags: 'wx', flush: true }));
    await rename(temporary, target);
    return target;
  } catch (error) {
    await rm(temporary, { force: true });
    if (contentError !== undefined) throw contentError.error;
    throw new ReconError('OUTPUT_UNWRITABLE', `cannot write ${file}: ${(error as Error).message}`, { cause: error });
  }
}
