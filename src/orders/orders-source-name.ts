import { ReconError } from '../errors.ts';

/**
 * How recon names the merchant's database in recon.order_imports, summaries and errors: `host:port/database`,
 * from RECON_ORDERS_DATABASE_URL without the user, the password or the query string (which may carry one too).
 * A value that is not a postgres:// URL is a CONFIG error that names the variable, never its value.
 */
export function describeOrdersSource(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch (error) {
    throw notAPostgresUrl(error);
  }
  if (parsed.protocol !== 'postgres:' && parsed.protocol !== 'postgresql:') throw notAPostgresUrl();
  // libpq's defaults: a socket host may come as ?host=, and the database defaults to the user's name.
  const host = parsed.host || parsed.searchParams.get('host') || 'localhost';
  const database = decoded(parsed.pathname.slice(1)) || decoded(parsed.username);
  return `${host}/${database}`;
}

/** Percent escapes as written when they do not decode: a name is for reading, not for connecting. */
function decoded(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

function notAPostgresUrl(cause?: unknown): ReconError {
  return new ReconError(
    'CONFIG',
    'invalid environment variable RECON_ORDERS_DATABASE_URL: expected a URL postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE',
    { cause },
  );
}
