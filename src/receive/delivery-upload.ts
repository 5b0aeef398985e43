import type { IncomingMessage } from 'node:http';
import type { Readable } from 'node:stream';
import busboy from 'busboy';
import { ClientGoneError, Refusal } from './refusal.ts';
import { mediaType, requestBody, whenClientGone } from './request-body.ts';

/**
 * The file of one delivery, as the service sends it (service-facts.md: unknown, so every reasonable form): a
 * multipart/form-data upload with the file in whichever part holds one, beside text fields, or the file as the raw
 * body. Its bytes are streamed, never gathered in memory.
 */
export interface DeliveryUpload {
  /**
   * The file's bytes, to be read once. Ends only when the whole request body has been read; throws a Refusal for
   * a malformed upload and ClientGoneError when the sender goes away. Leaving it early leaves the request open,
   * so that a refusal can still be answered.
   */
  readonly bytes: AsyncIterable<Buffer>;
  /** Complete once `bytes` has ended. */
  readonly description: UploadDescription;
}

export interface UploadDescription {
  contentType: string | null;
  filename: string | null;
  /** Text fields of a multipart upload. */
  readonly fields: Record<string, string>;
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

/** Throws a 415 Refusal for a body type that is neither multipart/form-data nor a file type (nor absent). */
export function openDeliveryUpload(request: IncomingMessage): DeliveryUpload {
  const header = request.headers['content-type'];
  const type = mediaType(header);
  if (type === 'multipart/form-data') {
    const description: UploadDescription = { contentType: null, filename: null, fields: {} };
    return { bytes: multipartFile(request, description), description };
  }
  if (type !== null && !RAW_CONTENT_TYPES.has(type)) {
    throw new Refusal(415, 'unsupported_type', `unsupported content type ${type}: send multipart/form-data or the file as the body`);
  }
  return { bytes: requestBody(request), description: { contentType: header ?? null, filename: null, fields: {} } };
}

async function* multipartFile(request: IncomingMessage, description: UploadDescription): AsyncGenerator<Buffer> {
  let parser: busboy.Busboy;
  try {
    parser = busboy({ headers: request.headers, limits: { files: 1, fields: MAX_FIELDS, fieldSize: MAX_FIELD_BYTES } });
  } catch (error) {
    throw new Refusal(400, 'bad_upload', `malformed multipart/form-data: ${(error as Error).message}`);
  }
  let problem: Error | undefined;
  const refuse = (message: string) => (problem ??= new Refusal(400, 'bad_upload', message));
  const malformed = (error: unknown) =>
    error instanceof ClientGoneError || error instanceof Refusal
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
    if (info.nameTruncated || info.valueTruncated) return void refuse(`multipart field ${name.slice(0, 64)} is longer than ${MAX_FIELD_BYTES} bytes`);
    description.fields[name] = value;
  });
  parser.on('file', (_name, stream, info) => {
    description.filename = info.filename ?? null;
    description.contentType = info.mimeType;
    // busboy may fail the stream (a body cut short) before the loop below reads it, which then throws that error.
    stream.on('error', () => {});
    foundFile(stream);
  });
  parser.on('filesLimit', () => refuse('more than one file in the multipart body'));
  parser.on('fieldsLimit', () => refuse(`more than ${MAX_FIELDS} fields in the multipart body`));

  request.pipe(parser);
  whenClientGone(request, (error) => parser.destroy(error));
  try {
    const stream = await Promise.race([file, parsed.then(() => null)]);
    if (stream === null) throw problem ?? new Refusal(400, 'bad_upload', 'no file in the multipart body');
    try {
      for await (const chunk of stream) yield chunk as Buffer;
    } catch (error) {
      // busboy ends the file's stream with its own error when the body is cut short or malformed.
      throw malformed(error);
    }
    await parsed;
    if (problem) throw problem;
  } finally {
    request.unpipe(parser);
  }
}
