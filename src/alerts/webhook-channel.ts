import { ReconError } from '../errors.ts';
import { redactUrl } from './redact.ts';

/**
 * POSTs an alert's JSON to the webhook. Delivered means a 2xx answer within `timeoutMs` (the whole exchange); any
 * other answer, a redirect included (an alert is not followed elsewhere), a timeout or a failed connection is
 * ReconError ALERT_DELIVERY, naming the webhook by its origin only (its path may be its token). A URL with
 * credentials (`https://user:password@host/...`) is sent as Basic authorization without them: fetch refuses a URL
 * that holds them. `stop` (a drain) cuts the send short as ReconError INTERRUPTED: not sent, not failed.
 */
export async function postAlertWebhook(
  url: string,
  body: unknown,
  timeoutMs: number,
  stop?: AbortSignal,
): Promise<void> {
  const where = `webhook ${redactUrl(url)}`;
  const { target, authorization } = withoutCredentials(url);
  const timeout = AbortSignal.timeout(timeoutMs);
  let status: number;
  try {
    const response = await fetch(target, {
      method: 'POST',
      headers: {
        'content-type': 'application/json; charset=utf-8',
        'user-agent': 'recon-alerts',
        ...(authorization ? { authorization } : {}),
      },
      body: JSON.stringify(body),
      redirect: 'manual',
      signal: stop ? AbortSignal.any([timeout, stop]) : timeout,
    });
    status = response.status;
    // Nothing in the answer matters but its status: let the connection go back to the pool.
    await response.body?.cancel();
  } catch (error) {
    if (stop?.aborted && !timeout.aborted)
      throw new ReconError('INTERRUPTED', `${where}: not sent, recon is stopping`, { cause: error });
    throw new ReconError('ALERT_DELIVERY', `${where}: ${failureOf(error, timeoutMs)}`, { cause: error });
  }
  if (status < 200 || status > 299) throw new ReconError('ALERT_DELIVERY', `${where} answered HTTP ${status}`);
}

/** The URL without its user and password, and those as a Basic Authorization header (RFC 7617), decoded first. */
function withoutCredentials(url: string): { target: string; authorization: string | undefined } {
  const parsed = new URL(url);
  if (parsed.username === '' && parsed.password === '') return { target: url, authorization: undefined };
  const credentials = `${decodeURIComponent(parsed.username)}:${decodeURIComponent(parsed.password)}`;
  parsed.username = '';
  parsed.password = '';
  return { target: parsed.href, authorization: `Basic ${Buffer.from(credentials, 'utf8').toString('base64')}` };
}

/** Why a fetch failed, from the codes undici puts on its cause, never from a message that could quote the URL. */
function failureOf(error: unknown, timeoutMs: number): string {
  if (error instanceof Error && error.name === 'TimeoutError') return `no answer within ${timeoutMs} ms`;
  const cause = (error as { cause?: unknown } | undefined)?.cause;
  const codes = (cause instanceof AggregateError ? cause.errors : [cause])
    .map((inner) => (inner as { code?: unknown } | undefined)?.code)
    .filter((code): code is string => typeof code === 'string');
  if (codes.length > 0 && codes.every((code) => code === 'ECONNREFUSED')) return 'connection refused';
  return codes.length > 0 ? `connection failed (${[...new Set(codes)].join(', ')})` : 'connection failed';
}
