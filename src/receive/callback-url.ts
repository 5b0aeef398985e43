import { ReconError } from '../errors.ts';

/** CALLBACKURL is string(1-32) (payment-api-3.0.md): the base URL and the token must fit in it together. */
export const CALLBACK_URL_MAX_CHARS = 32;
/** 8 base62 characters are about 47 bits: too many to guess while a token is open. */
export const MIN_TOKEN_CHARS = 8;

/** Where deliveries arrive: every CALLBACKURL is `base` followed by a token of `tokenLength` characters. */
export interface CallbackEndpoint {
  /** The base URL as CALLBACKURLs start, e.g. `https://shop.example/cb/`. */
  readonly base: string;
  /** Its path, which the receiver serves deliveries under, e.g. `/cb/`. */
  readonly path: string;
  /** Every character the base leaves free: the longer, the harder to guess. */
  readonly tokenLength: number;
}

/**
 * Checks RECON_CALLBACK_BASE_URL once, at start-up: a base that leaves fewer than MIN_TOKEN_CHARS of the 32 is
 * refused (ReconError CONFIG) rather than discovered when the service rejects the first export request.
 */
export function callbackEndpoint(baseUrl: string): CallbackEndpoint {
  let url: URL;
  try {
    url = new URL(baseUrl);
  } catch {
    throw configError(`${JSON.stringify(baseUrl)} is not a URL`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw configError(`${url.protocol} is not http: or https:`);
  if (url.search || url.hash || baseUrl.includes('?') || baseUrl.includes('#')) {
    throw configError('must not have a query or fragment: the token is appended to its path');
  }
  if (url.username || url.password) throw configError('must not carry credentials');
  // The URL's own spelling (`https://shop.example` gains its `/`), so that base + token is a valid URL.
  const base = url.href;
  const tokenLength = CALLBACK_URL_MAX_CHARS - base.length;
  if (tokenLength < MIN_TOKEN_CHARS) {
    throw configError(
      `${base} is ${base.length} characters and leaves ${Math.max(tokenLength, 0)} of CALLBACKURL's ${CALLBACK_URL_MAX_CHARS} for the token, fewer than ${MIN_TOKEN_CHARS}: use a shorter host name or path`,
    );
  }
  return { base, path: url.pathname, tokenLength };
}

function configError(problem: string): ReconError {
  return new ReconError('CONFIG', `invalid RECON_CALLBACK_BASE_URL: ${problem}`);
}
