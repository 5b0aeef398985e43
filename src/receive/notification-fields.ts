import type { IncomingMessage } from 'node:http';
import busboy from 'busboy';
import { decodeNotification } from '../protocol/notification-encoding.ts';
import { ProtocolError } from '../protocol/protocol-error.ts';
import { ClientGoneError, Refusal } from './refusal.ts';
import { mediaType, requestBody, whenClientGone } from './request-body.ts';

/** A notification is a few dozen short fields; anything much larger is not one. */
export const MAX_NOTIFICATION_BYTES = 64 * 1024;
const MAX_FIELDS = 200;

/**
 * The fields of a notification exactly as sent (service-facts.md: by GET or POST): the query string of a GET, the
 * form body of a POST (urlencoded, or multipart/form-data as some senders make form posts), never both, so that
 * a query in the configured notify URL does not enter the HASH. Throws a Refusal for a body that is not a form,
 * is too large, has no field, or repeats one (which of two values was signed is unknowable).
 */
export async function readNotificationFields(request: IncomingMessage, url: URL): Promise<Record<string, string>> {
  const form = request.method === 'GET' ? url.searchParams : await readPostedForm(request);
  let fields: Record<string, string>;
  try {
    fields = decodeNotification(form);
  } catch (error) {
    if (error instanceof ProtocolError) throw new Refusal(400, 'malformed', error.message);
    throw error;
  }
  if (Object.keys(fields).length === 0) throw new Refusal(400, 'malformed', 'no notification fields');
  return fields;
}

async function readPostedForm(request: IncomingMessage): Promise<URLSearchParams> {
  if (Number(request.headers['content-length']) > MAX_NOTIFICATION_BYTES) throw tooLarge();
  const type = mediaType(request.headers['content-type']);
  if (type === 'multipart/form-data') return readMultipartForm(request);
  if (type !== null && type !== 'application/x-www-form-urlencoded') {
    throw new Refusal(415, 'unsupported_type', `unsupported content type ${type}: send application/x-www-form-urlencoded`);
  }
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of requestBody(request) as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_NOTIFICATION_BYTES) throw tooLarge();
    chunks.push(chunk);
  }
  return new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
}

function readMultipartForm(request: IncomingMessage): Promise<URLSearchParams> {
  return new Promise((resolve, reject) => {
    let parser: busboy.Busboy;
    try {
      parser = busboy({ headers: request.headers, limits: { files: 0, fields: MAX_FIELDS, fieldSize: MAX_NOTIFICATION_BYTES } });
    } catch (error) {
      return reject(new Refusal(400, 'malformed', `malformed multipart/form-data: ${(error as Error).message}`));
    }
    const form = new URLSearchParams();
    let size = 0;
    const refuse = (refusal: Refusal) => {
      request.unpipe(parser);
      reject(refusal);
    };
    parser.on('field', (name, value) => {
      size += name.length + value.length;
      if (size > MAX_NOTIFICATION_BYTES) return refuse(tooLarge());
      form.append(name, value);
    });
    parser.on('filesLimit', () => refuse(new Refusal(400, 'malformed', 'a notification has no file parts')));
    parser.on('fieldsLimit', () => refuse(new Refusal(400, 'malformed', `more than ${MAX_FIELDS} fields`)));
    parser.on('error', (error: Error) => {
      reject(error instanceof ClientGoneError ? error : new Refusal(400, 'malformed', `malformed multipart/form-data: ${error.message}`));
    });
    parser.on('close', () => resolve(form));
    request.pipe(parser);
    whenClientGone(request, (error) => parser.destroy(error));
  });
}

function tooLarge(): Refusal {
  return new Refusal(413, 'too_large', `notification body over ${MAX_NOTIFICATION_BYTES} bytes`);
}
