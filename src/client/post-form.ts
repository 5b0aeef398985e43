import { ReconError } from '../errors.ts';
import { TransportError } from './transport-error.ts';

export type FetchFunction = typeof globalThis.fetch;

/** Gateway answers: the request may not have reached the service, and a read may be asked again. */
const GATEWAY_STATUSES: ReadonlySet<number> = new Set([502, 503, 504]);

/**
 * POSTs a form body and returns the parsed JSON answer. The timeout covers the whole exchange, body
 * included. Failures: TransportError (NETWORK, TIMEOUT) or ReconError PROTOCOL_RESPONSE for an answer
 * that is not a JSON object.
 */
export async function postForm(fetch: FetchFunction, url: string, body: string, timeoutMs: number): Promise<unknown> {
  const signal = AbortSignal.timeout(timeoutMs);
  let text: string;
  let status: number;
  try {
    const response = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
      body,
      signal,
    });
    status = response.status;
    text = await response.text();
  } catch (error) {
    throw transportError(url, timeoutMs, error);
  }
  if (GATEWAY_STATUSES.has(status)) {
    throw new TransportError('NETWORK', `${url} answered HTTP ${status}`, { neverSent: false });
  }
  if (status !== 200) throw new ReconError('PROTOCOL_RESPONSE', `${url} answered HTTP ${status}, expected 200`);
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new ReconError('PROTOCOL_RESPONSE', `${url} answered a body that is not JSON: ${preview(text)}`, {
      cause: error,
    });
  }
}

function transportError(url: string, timeoutMs: number, error: unknown): TransportError {
  if (error instanceof Error && error.name === 'TimeoutError') {
    return new TransportError('TIMEOUT', `${url} did not answer within ${timeoutMs} ms`, {
      neverSent: false,
      cause: error,
    });
  }
  const refused = isConnectionRefused(error);
  const reason = refused ? 'connection refused' : `connection failed (${networkReason(error)})`;
  return new TransportError('NETWORK', `${url}: ${reason}`, { neverSent: refused, cause: error });
}

/** undici reports a refused connect as `fetch failed` caused by ECONNREFUSED (an AggregateError when several addresses were tried). */
function isConnectionRefused(error: unknown): boolean {
  const cause = (error as { cause?: unknown } | undefined)?.cause;
  if (cause instanceof AggregateError) return cause.errors.length > 0 && cause.errors.every(isRefusedCode);
  return isRefusedCode(cause);
}

function isRefusedCode(error: unknown): boolean {
  return (error as { code?: unknown } | undefined)?.code === 'ECONNREFUSED';
}

function networkReason(error: unknown): string {
  const cause = (error as { cause?: unknown } | undefined)?.cause;
  const code = (cause as { code?: unknown } | undefined)?.code;
  const message = cause instanceof Error ? cause.message : error instanceof Error ? error.message : String(error);
  return typeof code === 'string' ? `${code}: ${message}` : message;
}

function preview(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return JSON.stringify(flat.length > 80 ? `${flat.slice(0, 80)}...` : flat);
}
