import { signParams } from './hash.ts';
import { invalidParameter } from './protocol-error.ts';

/**
 * Notifications are flat form fields (no `params[...]` wrapper), sent by GET (query string) or POST (body).
 * The HASH covers every field but HASH.
 */
export function encodeNotification(fields: Record<string, string>, secret: string): string {
  const signed = signParams(secret, fields) as Record<string, string>;
  return new URLSearchParams(signed).toString();
}

/** Throws ProtocolError 1002 for a repeated field: which of two values would be the signed one is unknowable. */
export function decodeNotification(body: string | URLSearchParams): Record<string, string> {
  const form = typeof body === 'string' ? new URLSearchParams(body) : body;
  const fields: Record<string, string> = {};
  for (const [name, value] of form) {
    if (Object.hasOwn(fields, name)) throw invalidParameter(name, 'given more than once');
    fields[name] = value;
  }
  return fields;
}
