/**
 * What never reaches a log line: the account's secret, HASH values, card holders' e-mails, passwords. Two nets:
 * fields named like a secret are censored by pino before the record is written (REDACTED_PATHS), and every line is
 * scrubbed as text (scrubLogLine) for what slips into a message, an error's text or an unexpected field: the
 * configured secrets themselves, anything shaped like a HASH (64 hex digits), e-mail addresses, and the
 * credentials of a URL. Callers still pass ids and counts, never a raw form or row.
 */

export const CENSORED = '[Redacted]';

/** Field names that hold a secret, an e-mail or a credential, in any of the spellings recon or the service uses. */
const SENSITIVE_KEYS = [
  'secret',
  'SECRET',
  'RECON_SECRET',
  'HASH',
  'hash',
  'EMAIL',
  'email',
  'CLIENTEMAIL',
  'MAILTO',
  'password',
  'PASSWORD',
  'authorization',
  'Authorization',
  'cookie',
  'token',
  'DATABASE_URL',
  'RECON_ORDERS_DATABASE_URL',
  'databaseUrl',
  'connectionString',
];

/** pino's redaction matches a path at a fixed depth: each key at the top, and two levels into an object. */
export const REDACTED_PATHS: readonly string[] = SENSITIVE_KEYS.flatMap((key) => [key, `*.${key}`, `*.*.${key}`]);

const URL_KEYS: ReadonlySet<string> = new Set([
  'DATABASE_URL',
  'RECON_ORDERS_DATABASE_URL',
  'databaseUrl',
  'connectionString',
]);

/** pino's censor: a connection string keeps its host and database, and loses its password; anything else goes. */
export function censor(value: unknown, path: string[]): unknown {
  if (typeof value === 'string' && URL_KEYS.has(path[path.length - 1]!)) return withoutCredentials(value);
  return CENSORED;
}

/** `scheme://user:password@host` and `scheme://token@host` keep their scheme and host only. */
const URL_CREDENTIALS = /([a-z][a-z0-9+.-]*:\/\/)[^\s/@"'?#]+@/gi;
/** A HASH, or any sha256 in hex: one of them is worth as much as the secret for forging a request. */
const HEX_256 = /(?<![0-9a-f])[0-9a-f]{64}(?![0-9a-f])/gi;
/** An e-mail address, plain or URL-encoded (`%40`). */
const EMAIL = /[a-z0-9._%+-]+(?:@|%40)[a-z0-9-]+(?:\.[a-z0-9-]+)*\.[a-z]{2,}/gi;

function withoutCredentials(text: string): string {
  return text.replace(URL_CREDENTIALS, `$1${CENSORED}@`);
}

/** The secrets worth looking for as text: shorter ones would censor ordinary words. */
const MIN_SECRET_LENGTH = 4;

/**
 * A function that scrubs one serialized line (a JSON record) of `secrets` (the account's secret, the database's
 * password) and of whatever looks like a HASH, an e-mail or URL credentials.
 */
export function logLineScrubber(secrets: readonly (string | undefined)[]): (line: string) => string {
  const literals = secrets
    .filter((secret): secret is string => secret !== undefined && secret.length >= MIN_SECRET_LENGTH)
    // As the secret appears inside a JSON string, and as it is.
    .flatMap((secret) => [JSON.stringify(secret).slice(1, -1), secret])
    .sort((a, b) => b.length - a.length);
  return (line) => {
    let text = line;
    for (const literal of literals) text = text.replaceAll(literal, CENSORED);
    return withoutCredentials(text).replace(HEX_256, CENSORED).replace(EMAIL, CENSORED);
  };
}

/** The password of a PostgreSQL connection string, to look for in log lines; undefined when it has none. */
export function connectionPassword(url: string | undefined): string | undefined {
  if (!url) return undefined;
  try {
    const password = new URL(url).password;
    return password ? decodeURIComponent(password) : undefined;
  } catch {
    return undefined;
  }
}
