import { createHash, timingSafeEqual } from 'node:crypto';
import type { Params } from './form-encoding.ts';

const HASH = 'HASH';

/**
 * The service's HASH (service-facts.md): sha256 of SECRET, then `NAME=value` + SECRET for every parameter
 * but HASH, names ascending; nested items flattened to `NAME[i][FIELD]`, indexes in numeric order, fields
 * ascending. Lower-case hex of the UTF-8 bytes; values raw, not URL-encoded.
 */
export function computeHash(secret: string, params: Params): string {
  const hash = createHash('sha256');
  hash.update(secret, 'utf8');
  for (const [name, value] of hashInput(params)) hash.update(`${name}=${value}${secret}`, 'utf8');
  return hash.digest('hex');
}

export function signParams(secret: string, params: Params): Params {
  return { ...params, [HASH]: computeHash(secret, params) };
}

/** Constant-time check of `params.HASH`; a missing or malformed HASH is simply not valid. */
export function verifyHash(secret: string, params: Params): boolean {
  const received = params[HASH];
  if (typeof received !== 'string') return false;
  const expected = Buffer.from(computeHash(secret, params), 'utf8');
  const actual = Buffer.from(received.toLowerCase(), 'utf8');
  return actual.length === expected.length && timingSafeEqual(actual, expected);
}

function* hashInput(params: Params): Generator<[string, string]> {
  for (const name of Object.keys(params).sort(byCodeUnit)) {
    const value = params[name];
    if (name === HASH || value === undefined) continue;
    if (typeof value === 'string') {
      yield [name, value];
      continue;
    }
    for (const [index, item] of value.entries()) {
      for (const field of Object.keys(item).sort(byCodeUnit)) yield [`${name}[${index}][${field}]`, item[field]!];
    }
  }
}

// Plain code-unit order (like the service's byte-wise sort), never the locale's collation.
function byCodeUnit(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
