import { createServer } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { answer, captured, captureRequest, clientFor, rejectionOf, walletPayment } from './client-fixtures.ts';
import { closeServer, listenOnLoopback, refusingBaseUrl } from '../support/loopback.ts';
import { answering, startServer } from './loopback-servers.ts';
import type { Behaviour, LoopbackServer } from './loopback-servers.ts';

let servers: { close(): Promise<void> }[] = [];
afterEach(async () => {
  await Promise.all(servers.map((server) => server.close()));
  servers = [];
});

async function serve(behaviour: (index: number) => Behaviour): Promise<LoopbackServer> {
  const server = await startServer(behaviour);
  servers.push(server);
  return server;
}

const data = { ...answer('getTransactions', '0000'), DATA: [{ ORDERID: 'o1' }] };
// Short enough to keep the hanging cases quick, long enough that a loaded machine still answers the next attempt in time.
const quickTimeout = { timeoutMs: 800 };

describe('process operations', () => {
  it.each(['5001', '5002', '5003', '5005'])('are repeated after the retryable EXECCODE %s', async (code) => {
    const server = await serve(answering(answer('capture', code), captured));
    await expect(clientFor(server.baseUrl).capture(captureRequest)).resolves.toMatchObject({ EXECCODE: '0000' });
    expect(server.received).toHaveLength(2);
  });

  it('give up after the configured attempts, with the last ServiceError', async () => {
    const server = await serve(answering(answer('refund', '5003')));
    const error = await rejectionOf(clientFor(server.baseUrl).refund(captureRequest));
    expect(error).toMatchObject({ code: 'SERVICE_ERROR', execCode: '5003' });
    expect(server.received).toHaveLength(3);
  });

  it.each(['5004', '4001', '2005', '1002'])('are not repeated after EXECCODE %s', async (code) => {
    const server = await serve(answering(answer('capture', code), captured));
    const error = await rejectionOf(clientFor(server.baseUrl).capture(captureRequest));
    expect(error).toMatchObject({ code: 'SERVICE_ERROR', execCode: code });
    expect(server.received).toHaveLength(1);
  });

  it('are not repeated after a timeout: the service may have received them', async () => {
    const server = await serve(() => 'hang');
    const error = await rejectionOf(clientFor(server.baseUrl, quickTimeout).capture(captureRequest));
    expect(error).toMatchObject({ code: 'TIMEOUT' });
    expect(error.message).toMatch(/did not answer within 800 ms/);
    expect(server.received).toHaveLength(1);
  });

  it('are not repeated after the connection dropped mid-request', async () => {
    const server = await serve(() => 'drop');
    const error = await rejectionOf(clientFor(server.baseUrl).payment(walletPayment));
    expect(error).toMatchObject({ code: 'NETWORK', neverSent: false });
    expect(server.received).toHaveLength(1);
  });

  it('are repeated when the connection was refused, and reach the service once it listens', async () => {
    const { baseUrl, port } = await refusingBaseUrl();
    const late = createServer((req, res) => {
      received += 1;
      req.resume().on('end', () => res.writeHead(200).end(JSON.stringify(captured)));
    });
    let received = 0;
    servers.push({ close: () => closeServer(late) });
    let refusals = 0;
    // Real fetch; after the first refusal the server starts on that very port, before the client's retry.
    const fetchThenListen: typeof fetch = async (input, init) => {
      try {
        return await fetch(input, init);
      } catch (error) {
        refusals += 1;
        if (refusals === 1) await listenOnLoopback(late, port);
        throw error;
      }
    };
    const client = clientFor(baseUrl, { fetch: fetchThenListen });
    await expect(client.capture(captureRequest)).resolves.toMatchObject({ EXECCODE: '0000' });
    expect([refusals, received]).toEqual([1, 1]);
  });

  it('report a refused connection as NETWORK, never sent, after the configured attempts', async () => {
    const { baseUrl } = await refusingBaseUrl();
    let attempts = 0;
    const counting: typeof fetch = (input, init) => {
      attempts += 1;
      return fetch(input, init);
    };
    const error = await rejectionOf(clientFor(baseUrl, { fetch: counting }).payment(walletPayment));
    expect(error).toMatchObject({ code: 'NETWORK', neverSent: true });
    expect(error.message).toContain('connection refused');
    expect(attempts).toBe(3);
  });
});

describe('getTransactions (a read)', () => {
  it('is repeated after a dropped connection', async () => {
    const server = await serve((index) => (index === 0 ? 'drop' : { json: data }));
    await expect(clientFor(server.baseUrl).getTransactions({ ORDERID: ['o1'] })).resolves.toEqual(data.DATA);
    expect(server.received).toHaveLength(2);
  });

  it('is repeated after a timeout', async () => {
    const server = await serve((index) => (index === 0 ? 'hang' : { json: data }));
    await expect(clientFor(server.baseUrl, quickTimeout).getTransactions({ ORDERID: ['o1'] })).resolves.toEqual(
      data.DATA,
    );
    expect(server.received).toHaveLength(2);
  });

  it.each(['5001', '5002', '5003', '5005'])('is repeated after EXECCODE %s', async (code) => {
    const server = await serve(answering(answer('getTransactions', code), data));
    await expect(clientFor(server.baseUrl).getTransactions({ ORDERID: ['o1'] })).resolves.toEqual(data.DATA);
    expect(server.received).toHaveLength(2);
  });

  it.each(['1002', '5004', '2002'])('is not repeated after EXECCODE %s', async (code) => {
    const server = await serve(answering(answer('getTransactions', code), data));
    const error = await rejectionOf(clientFor(server.baseUrl).getTransactions({ ORDERID: ['o1'] }));
    expect(error).toMatchObject({ code: 'SERVICE_ERROR', execCode: code });
    expect(server.received).toHaveLength(1);
  });

  it('stops after the configured attempts', async () => {
    const server = await serve(() => 'drop');
    const client = clientFor(server.baseUrl, { retry: { attempts: 4, baseDelayMs: 1 } });
    const error = await rejectionOf(client.getTransactions({ ORDERID: ['o1'] }));
    expect(error).toMatchObject({ code: 'NETWORK' });
    expect(server.received).toHaveLength(4);
  });
});
