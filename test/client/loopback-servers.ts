import { createServer } from 'node:http';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { decodeRequest, type Params } from '@recon/protocol';
import { closeServer, listenOnLoopback } from '../support/loopback.ts';

/** Real HTTP servers on 127.0.0.1 that count what they receive, one per failure mode the client must handle. */
export interface ReceivedRequest {
  readonly path: string;
  readonly contentType: string | undefined;
  readonly method: string;
  readonly params: Params;
}

export interface LoopbackServer {
  readonly baseUrl: string;
  readonly received: ReceivedRequest[];
  close(): Promise<void>;
}

/** What the server does with the n-th request (0-based): answer a JSON object, hang, or drop the socket. */
export type Behaviour = { json: object } | 'hang' | 'drop';

export async function startServer(
  behaviour: (index: number, request: ReceivedRequest) => Behaviour,
): Promise<LoopbackServer> {
  const received: ReceivedRequest[] = [];
  const server = createServer((req, res) => {
    void readBody(req).then((body) => {
      const { method, params } = decodeRequest(body);
      const request = { path: req.url ?? '', contentType: req.headers['content-type'], method, params };
      received.push(request);
      act(behaviour(received.length - 1, request), req, res);
    });
  });
  const baseUrl = await listenOnLoopback(server);
  return { baseUrl, received, close: () => closeServer(server) };
}

export function answering(...answers: object[]): (index: number) => Behaviour {
  return (index) => ({ json: answers[Math.min(index, answers.length - 1)]! });
}

function act(behaviour: Behaviour, req: IncomingMessage, res: ServerResponse): void {
  if (behaviour === 'hang') return;
  if (behaviour === 'drop') {
    req.socket.destroy();
    return;
  }
  res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(behaviour.json));
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}
