import { ReconError } from '../errors.ts';
import { redactUrl } from './redact.ts';

/**
 * POSTs an alert's JSON to the webhook. Delivered means a 2xx answer within `timeoutMs` (the whole exchange); any
 * other answer, a redirect included (an alert is not followed elsewhere), a timeout or a failed connection is
 * ReconError ALERT_DELIVERY, naming the webhook by its origin only (its path may be its token).
 */
export async function postAlertWebhook(url: string, body: unknown, timeoutMs: number): Promise<void> {
  const where = `webhook ${redactUrl(url)}`;
  let status: number;
  try {
    const response = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json; charset=utf-8', 'user-agent': 'recon-alerts' },
      body: JSON.stringify(body),
      redirect: 'manual',
      signal: AbortSignal.timeout(timeoutMs),
    });
    status = response.status;
    // Nothing in the answer matters but its status: let the connection go back to the pool.
    await response.body?.cancel();
  } catch (error) {
    throw new ReconError('ALERT_DELIVERY', `${where}: ${failureOf(error, timeoutMs)}`, { cause: error });
  }
  if (status < 200 || status > 299) throw new ReconError('ALERT_DELIVERY', `${where} answered HTTP ${status}`);
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
