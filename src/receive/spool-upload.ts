import { createHash } from 'node:crypto';
import { open, type FileHandle } from 'node:fs/promises';
import type { IncomingMessage } from 'node:http';
import path from 'node:path';
import type { Readable } from 'node:stream';
import busboy from 'busboy';
import { makeTempFolder } from '../temp/temp-folder.ts';
import { ClientGoneError, Refusal } from './refusal.ts';
import { mediaType, pumpStream, whenClientGone } from './request-body.ts';
import { guardAgainstSlowClient, SlowClientError, type SlowClientRule } from './slow-client-guard.ts';

/**
 * The file of one delivery, read whole into a temp file before the database is touched, so that a slow or
 * stalled sender holds a temp file and an upload slot, never a database connection or a transaction.
 */
export interface SpooledUpload {
  readonly path: string;
  readonly sha256: string;
  readonly bytes: number;
  /** The file part's type in a multipart upload, the request's Content-Type otherwise; null when none was sent. */
  readonly contentType: string | null;
  /** The multipart file part's filename, as sent. */
  readonly filename: string | null;
  /** Text fields of a multipart upload. */
  readonly fields: Readonly<Record<string, string>>;
  /** Deletes the file and its folder. */
  remove(): Promise<void>;
}

export interface SpoolOptions {
  /** RECON_MAX_FILE_BYTES: enforced as bytes arrive (413), so a body over it is never stored. */
  readonly maxBytes: number;
  readonly slowClient: SlowClientRule;
  /** Where the temp folder is made (the system's temp folder by default). */
  readonly directory?: string;
}

/** Raw body types taken as a file (the content decides how it is read: its first bytes, not its label). */
const RAW_CONTENT_TYPES: ReadonlySet<string> = new Set([
  'application/octet-stream',
  'application/zip',
  'application/x-zip-compressed',
  'application/gzip',
  'application/x-gzip',
  'application/x-bzip2',
  'text/csv',
]);

const MAX_FIELDS = 100;
const MAX_FIELD_BYTES = 64 * 1024;

/**
 * Reads the delivered file, as the service sends it (service-facts.md: unknown, so every reasonable form): a
 * multipart/form-data upload with the file in whichever part holds one, beside text fields, or the file as the raw
 * body. Throws a Refusal (400, 413, 415) for what cannot be a delivery, ClientGoneError when the sender goes away,
 * SlowClientError when it trickles; then nothing is left on disk, and the request is left open to be answered.
 */
export async function spoolUpload(request: IncomingMessage, options: SpoolOptions): Promise<SpooledUpload> {
  const type = mediaType(request.headers['content-type']);
  if (type !== 'multipart/form-data' && type !== null && !RAW_CONTENT_TYPES.has(type)) {
    throw new Refusal(
      415,
      'unsupported_type',
      `unsupported content type ${type}: send multipart/form-data or the file as the body`,
    );
  }
  // Gone while its token was looked up: whatever it sent is lost with its connection.
  if (request.destroyed) throw new ClientGoneError();
  const folder = await makeTempFolder('upload', options.directory);
  const filePath = path.join(folder.path, 'upload');
  let sink: FileHandle | undefined;
  let writing = false;
  const stopGuard = guardAgainstSlowClient(request, options.slowClient, () => writing);
  try {
    sink = await open(filePath, 'wx');
    const file = sink;
    const hash = createHash('sha256');
    let bytes = 0;
    const write = async (piece: Buffer) => {
      bytes += piece.length;
      if (bytes > options.maxBytes)
        throw new Refusal(413, 'too_large', `body over RECON_MAX_FILE_BYTES (${options.maxBytes} bytes)`);
      hash.update(piece);
      writing = true;
      try {
        await file.write(piece);
      } finally {
        writing = false;
      }
    };
    const description =
      type === 'multipart/form-data'
        ? await readMultipartFile(request, write)
        : (await pumpStream(request, write),
          { contentType: request.headers['content-type'] ?? null, filename: null, fields: {} });
    if (bytes === 0) throw new Refusal(400, 'empty', 'empty body: the delivered file has no bytes');
    await sink.close();
    sink = undefined;
    return { path: filePath, sha256: hash.digest('hex'), bytes, ...description, remove: folder.remove };
  } catch (error) {
    await sink?.close().catch(() => {});
    await folder.remove();
    throw request.errored instanceof SlowClientError ? request.errored : error;
  } finally {
    stopGuard();
  }
}

type UploadDescription = Pick<SpooledUpload, 'contentType' | 'filename' | 'fields'>;

async function readMultipartFile(
  request: IncomingMessage,
  write: (piece: Buffer) => Promise<void>,
): Promise<UploadDescription> {
  let parser: busboy.Busboy;
  try {
    parser = busboy({ headers: request.headers, limits: { files: 1, fields: MAX_FIELDS, fieldSize: MAX_FIELD_BYTES } });
  } catch (error) {
    throw new Refusal(400, 'bad_upload', `malformed multipart/form-data: ${(error as Error).message}`);
  }
  const description = {
    contentType: null as string | null,
    filename: null as string | null,
    fields: {} as Record<string, string>,
  };
  let problem: Error | undefined;
  const refuse = (message: string) => (problem ??= new Refusal(400, 'bad_upload', message));
  const malformed = (error: unknown) =>
    error instanceof ClientGoneError || error instanceof Refusal || error instanceof SlowClientError
      ? error
      : new Refusal(400, 'bad_upload', `malformed multipart/form-data: ${(error as Error).message}`);
  let foundFile: (file: Readable | null) => void = () => {};
  const file = new Promise<Readable | null>((resolve) => (foundFile = resolve));
  const parsed = new Promise<void>((resolve, reject) => {
    parser.on('close', resolve);
    parser.on('error', (error: Error) => reject(malformed(error)));
  });
  // Awaited below; until then a rejection must not count as unhandled.
  parsed.catch(() => {});

  parser.on('field', (name, value, info) => {
    if (info.nameTruncated || info.valueTruncated)
      return void refuse(`multipart field ${name.slice(0, 64)} is longer than ${MAX_FIELD_BYTES} bytes`);
    description.fields[name] = value;
  });
  parser.on('file', (_name, stream, info) => {
    // busboy may fail the stream (a body cut short) before it is read: the error is seen by pumpStream or lost here.
    stream.on('error', () => {});
    description.filename = info.filename ?? null;
    description.contentType = info.mimeType;
    foundFile(stream);
  });
  parser.on('filesLimit', () => refuse('more than one file in the multipart body'));
  parser.on('fieldsLimit', () => refuse(`more than ${MAX_FIELDS} fields in the multipart body`));

  request.pipe(parser);
  whenClientGone(request, (error) =>
    parser.destroy(request.errored instanceof SlowClientError ? request.errored : error),
  );
  try {
    const stream = await Promise.race([file, parsed.then(() => null)]);
    if (stream === null) throw problem ?? new Refusal(400, 'bad_upload', 'no file in the multipart body');
    // Whichever fails first: busboy may fail the whole body while the file's stream just stops.
    await Promise.all([pumpStream(stream, write), parsed]).catch((error: unknown) => {
      throw malformed(error);
    });
    if (problem) throw problem;
    return description;
  } finally {
    request.unpipe(parser);
  }
}
