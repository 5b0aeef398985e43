import http from 'node:http';
import https from 'node:https';
import { createInFlightLimit } from './in-flight-limit.ts';

/** A merchant's answer: its status and the start of its body, enough to tell `OK` from anything else. */
export interface PostAnswer {
  readonly status: number;
  readonly text: string;
}

/**
 * POSTs forms with at most `maxInFlight` at once and as many connections, kept alive between POSTs: a seeded
 * scenario notifies thousands of operations at once, and a merchant's server closes the connections a client opens
 * past its bound (recon's receiver: RECON_MAX_CONNECTIONS_PER_CLIENT). fetch cannot be held to a number of
 * connections: it opened a new one whenever the one just answered was not yet free. A POST waiting its turn has not
 * started its time: `timeoutMs` is the POST's own.
 */
export interface BoundedFormPoster {
  post(
    url: string,
    body: string,
    options: { readonly timeoutMs: number; readonly signal: AbortSignal },
  ): Promise<PostAnswer>;
  /** Closes the connections kept alive. */
  close(): void;
}

/** A longer answer is cut there: only `OK` is looked for. */
const ANSWER_BYTES_KEPT = 1024;

export function createBoundedFormPoster(maxInFlight: number): BoundedFormPoster {
  const inFlight = createInFlightLimit(maxInFlight);
  const agents = {
    http: new http.Agent({ keepAlive: true, maxSockets: maxInFlight }),
    https: new https.Agent({ keepAlive: true, maxSockets: maxInFlight }),
  };
  return {
    post: (url, body, { timeoutMs, signal }) =>
      inFlight.run(() =>
        postForm(new URL(url), body, agents, AbortSignal.any([AbortSignal.timeout(timeoutMs), signal])),
      ),
    close() {
      agents.http.destroy();
      agents.https.destroy();
    },
  };
}

function postForm(
  url: URL,
  body: string,
  agents: { http: http.Agent; https: https.Agent },
  signal: AbortSignal,
): Promise<PostAnswer> {
  const secure = url.protocol === 'https:';
  return new Promise((resolve, reject) => {
    const headers = { 'content-type': 'application/x-www-form-urlencoded', 'content-length': Buffer.byteLength(body) };
    const options = { method: 'POST', headers, signal };
    const answered = (response: http.IncomingMessage) => {
      const kept: Buffer[] = [];
      let keptBytes = 0;
      response.on('data', (chunk: Buffer) => {
        if (keptBytes < ANSWER_BYTES_KEPT) kept.push(chunk);
        keptBytes += chunk.length;
      });
      response.on('end', () =>
        resolve({ status: response.statusCode ?? 0, text: Buffer.concat(kept).toString('utf8') }),
      );
      response.on('error', reject);
    };
    const request = secure
      ? https.request(url, { ...options, agent: agents.https }, answered)
      : http.request(url, { ...options, agent: agents.http }, answered);
    request.on('error', reject);
    request.end(body);
  });
}
