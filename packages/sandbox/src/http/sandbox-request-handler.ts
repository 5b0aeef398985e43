import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import { CARDHOLDER_PATH_PREFIX } from '../cardholder/cardholder-url.ts';
import { BodyTooLargeError, readBody } from './read-body.ts';
import { sendHtml, sendJson, sendText } from './respond.ts';

/** What the sandbox answers on each route; the handler only does HTTP. */
export interface SandboxEndpoints {
  /** `baseUrl` is the address the client reached the sandbox at, for the absolute URLs in answers. */
  process(body: string, baseUrl: string): object;
  export(body: string): Promise<object>;
  cardholderPage(transactionId: string): HtmlAnswer;
  cardholderAnswer(transactionId: string, form: URLSearchParams): HtmlAnswer;
  clockNow(): Date;
  advanceClockDays(days: number): Date;
}

export interface HtmlAnswer {
  readonly status: number;
  readonly html: string;
}

export interface RequestHandlerOptions {
  /** Path the routes live under ('' or '/something'). */
  readonly basePath: string;
  /** Base URL to use when a request carries no Host header. */
  readonly fallbackBaseUrl: () => string;
  readonly bodyLimitBytes?: number;
  /** An endpoint threw: the client gets a 500, the error goes here. */
  readonly onError?: (error: unknown) => void;
}

export const PROCESS_PATH = '/front/service/rest/process';
export const EXPORT_PATH = '/front/service/rest/export';
export const CLOCK_PATH = '/sandbox/clock';

export function createRequestHandler(endpoints: SandboxEndpoints, options: RequestHandlerOptions): RequestListener {
  const bodyLimitBytes = options.bodyLimitBytes ?? 1024 * 1024;

  async function route(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const url = new URL(request.url ?? '/', 'http://sandbox.invalid');
    if (!url.pathname.startsWith(options.basePath)) return notFound(response, url.pathname);
    const path = url.pathname.slice(options.basePath.length);
    const host = request.headers.host;
    const baseUrl = host ? `http://${host}${options.basePath}` : options.fallbackBaseUrl();
    const method = request.method ?? 'GET';

    if (path === PROCESS_PATH || path === EXPORT_PATH) {
      if (method !== 'POST') return notAllowed(response, 'POST');
      const body = await readBody(request, bodyLimitBytes);
      const answer = path === PROCESS_PATH ? endpoints.process(body, baseUrl) : await endpoints.export(body);
      return sendJson(response, 200, answer);
    }
    if (path === CLOCK_PATH) {
      if (method === 'GET') return sendClock(request, response, endpoints.clockNow());
      if (method !== 'POST') return notAllowed(response, 'GET, POST');
      const days = parseAdvanceDays(await readBody(request, bodyLimitBytes));
      if (typeof days === 'string') return sendJson(response, 400, { error: days });
      return sendClock(request, response, endpoints.advanceClockDays(days));
    }
    if (path.startsWith(CARDHOLDER_PATH_PREFIX) && path.length > CARDHOLDER_PATH_PREFIX.length) {
      const transactionId = decodeURIComponent(path.slice(CARDHOLDER_PATH_PREFIX.length));
      if (method === 'GET') {
        const page = endpoints.cardholderPage(transactionId);
        return sendHtml(response, page.status, page.html);
      }
      if (method !== 'POST') return notAllowed(response, 'GET, POST');
      const form = new URLSearchParams(await readBody(request, bodyLimitBytes));
      const page = endpoints.cardholderAnswer(transactionId, form);
      return sendHtml(response, page.status, page.html);
    }
    notFound(response, url.pathname);
  }

  return (request, response) => {
    route(request, response).catch((error: unknown) => {
      if (response.headersSent) return void response.destroy();
      if (error instanceof BodyTooLargeError) {
        return sendJson(response, 413, { error: error.message }, { connection: 'close' });
      }
      if (error instanceof URIError) return sendJson(response, 400, { error: 'malformed URL' });
      options.onError?.(error);
      sendJson(response, 500, { EXECCODE: '5001', MESSAGE: 'internal sandbox error' });
    });
  };
}

/**
 * The clock as a bare ISO 8601 instant (text/plain), which is what a shell script or a test reads most simply;
 * a client that asks for JSON gets `{"now": "<ISO 8601>"}`.
 */
function sendClock(request: IncomingMessage, response: ServerResponse, now: Date): void {
  const iso = now.toISOString();
  if (/\bapplication\/json\b/.test(request.headers.accept ?? '')) return sendJson(response, 200, { now: iso });
  sendText(response, 200, iso);
}

/** `{"advanceDays": n}` with n a non-negative number, or the reason it is not. */
function parseAdvanceDays(body: string): number | string {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return 'body must be JSON like {"advanceDays": 7}';
  }
  const days = (parsed as { advanceDays?: unknown } | null)?.advanceDays;
  if (typeof days !== 'number' || !Number.isFinite(days) || days < 0) {
    return 'advanceDays must be a non-negative number (the sandbox clock only moves forward)';
  }
  return days;
}

function notFound(response: ServerResponse, path: string): void {
  sendJson(response, 404, { error: `no sandbox route ${path}` });
}

function notAllowed(response: ServerResponse, allow: string): void {
  sendJson(response, 405, { error: `method not allowed; use ${allow}` }, { allow });
}
