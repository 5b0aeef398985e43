import type { IncomingMessage } from 'node:http';
import busboy from 'busboy';
import { decodeNotification, ProtocolError } from '@recon/protocol';
import { Refusal } from './refusal.ts';
import { mediaType, pumpStream } from './request-body.ts';
import { guardAgainstSlowClient, SlowClientError, type SlowClientRule } from './slow-client-guard.ts';

/** A notification is a few dozen short fields; anything much larger is not one. */
export const MAX_NOTIFICATION_BYTES = 64 * 1024;
const MAX_FIELDS = 200;

export interface ReceivedNotification {
  readonly fields: Record<string, string>;
  /** The query string of a GET or the body of a POST, byte for byte: what was signed, whatever it holds. */
  readonly raw: Buffer;
}

/**
 * The fields of a notification exactly as sent (service-facts.md: by GET or POST): the query string of a GET, the
 * form body of a POST (urlencoded, or multipart/form-data as some senders make form posts), never both, so that
 * a query in the configured notify URL does not enter the HASH. Throws a Refusal for a body that is not a form,
 * is too large, has no field, or repeats one (which of two values was signed is unknowable).
 */
export async function readNotification(
  request: IncomingMessage,
  slowClient: SlowClientRule,
): Promise<ReceivedNotification> {
  const target = request.url ?? '';
  const query = target.includes('?') ? target.slice(target.indexOf('?') + 1) : '';
  let raw: Buffer;
  let form: URLSearchParams;
  if (request.method === 'GET') {
    raw = Buffer.from(query, 'latin1');
    form = new URLSearchParams(query);
  } else {
    const type = mediaType(request.headers['content-type']);
    if (type !== null && type !== 'multipart/form-data' && type !== 'application/x-www-form-urlencoded') {
      throw new Refusal(
        415,
        'unsupported_type',
        `unsupported content type ${type}: send application/x-www-form-urlencoded`,
      );
    }
    raw = await readSmallBody(request, slowClient);
    form =
      type === 'multipart/form-data'
        ? await parseMultipartForm(request, raw)
        : new URLSearchParams(raw.toString('utf8'));
  }
  let fields: Record<string, string>;
  try {
    fields = decodeNotification(form);
  } catch (error) {
    if (error instanceof ProtocolError) throw new Refusal(400, 'malformed', error.message);
    throw error;
  }
  if (Object.keys(fields).length === 0) throw new Refusal(400, 'malformed', 'no notification fields');
  return { fields, raw };
}

async function readSmallBody(request: IncomingMessage, slowClient: SlowClientRule): Promise<Buffer> {
  if (Number(request.headers['content-length']) > MAX_NOTIFICATION_BYTES) throw tooLarge();
  const chunks: Buffer[] = [];
  let size = 0;
  const stopGuard = guardAgainstSlowClient(request, slowClient, () => false);
  try {
    await pumpStream(request, (chunk) => {
      size += chunk.length;
      if (size > MAX_NOTIFICATION_BYTES) throw tooLarge();
      chunks.push(chunk);
    });
  } catch (error) {
    throw request.errored instanceof SlowClientError ? request.errored : error;
  } finally {
    stopGuard();
  }
  return Buffer.concat(chunks, size);
}

function parseMultipartForm(request: IncomingMessage, body: Buffer): Promise<URLSearchParams> {
  return new Promise((resolve, reject) => {
    let parser: busboy.Busboy;
    try {
      parser = busboy({
        headers: request.headers,
        limits: { files: 0, fields: MAX_FIELDS, fieldSize: MAX_NOTIFICATION_BYTES },
      });
    } catch (error) {
      return reject(new Refusal(400, 'malformed', `malformed multipart/form-data: ${(error as Error).message}`));
    }
    const form = new URLSearchParams();
    parser.on('field', (name, value) => form.append(name, value));
    parser.on('filesLimit', () => reject(new Refusal(400, 'malformed', 'a notification has no file parts')));
    parser.on('fieldsLimit', () => reject(new Refusal(400, 'malformed', `more than ${MAX_FIELDS} fields`)));
    parser.on('error', (error: Error) =>
      reject(new Refusal(400, 'malformed', `malformed multipart/form-data: ${error.message}`)),
    );
    parser.on('close', () => resolve(form));
    parser.end(body);
  });
}

function tooLarge(): Refusal {
  return new Refusal(413, 'too_large', `notification body over ${MAX_NOTIFICATION_BYTES} bytes`);
}
