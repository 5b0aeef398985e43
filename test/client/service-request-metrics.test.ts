import { afterEach, describe, expect, it } from 'vitest';
import type { ServiceAttempt } from '../../src/client/service-attempt.ts';
import { registerServiceRequestMetrics } from '../../src/client/service-request-metrics.ts';
import { createMetricsRegistry } from '../../src/metrics/metrics-registry.ts';
import { refusingBaseUrl } from '../support/loopback.ts';
import { answer, captured, captureRequest, clientFor, rejectionOf } from './client-fixtures.ts';
import { answering, startServer, type Behaviour, type LoopbackServer } from './loopback-servers.ts';

let servers: LoopbackServer[] = [];
afterEach(async () => {
  await Promise.all(servers.map((server) => server.close()));
  servers = [];
});

async function serve(behaviour: (index: number) => Behaviour): Promise<LoopbackServer> {
  const server = await startServer(behaviour);
  servers.push(server);
  return server;
}

/** Each attempt the client reports, against real servers on loopback, by what the service did. */
describe('the attempts a client reports', () => {
  const recording = () => {
    const attempts: ServiceAttempt[] = [];
    return { attempts, onAttempt: (attempt: ServiceAttempt) => attempts.push(attempt) };
  };

  it('one per HTTP exchange, retries included: the EXECCODE class and the seconds it took', async () => {
    const server = await serve(answering(answer('capture', '5003'), captured));
    const { attempts, onAttempt } = recording();
    await clientFor(server.baseUrl, { onAttempt }).capture(captureRequest);
    expect(attempts.map(({ operation, outcome, execCode }) => ({ operation, outcome, execCode }))).toEqual([
      { operation: 'capture', outcome: '5xxx', execCode: '5003' },
      { operation: 'capture', outcome: '0xxx', execCode: '0000' },
    ]);
    for (const attempt of attempts) expect(attempt.seconds).toBeGreaterThan(0);
  });

  it('why there was no EXECCODE: a timeout, a refused connection, an answer that is not the protocol', async () => {
    const { attempts, onAttempt } = recording();
    const hanging = await serve(() => 'hang');
    await rejectionOf(clientFor(hanging.baseUrl, { onAttempt, timeoutMs: 300 }).capture(captureRequest));
    const { baseUrl } = await refusingBaseUrl();
    await rejectionOf(clientFor(baseUrl, { onAttempt, retry: { attempts: 1, baseDelayMs: 1 } }).refund(captureRequest));
    const odd = await serve(answering({ unexpected: true }));
    await rejectionOf(clientFor(odd.baseUrl, { onAttempt }).capture(captureRequest));
    expect(attempts.map((attempt) => attempt.outcome)).toEqual(['timeout', 'network', 'bad_answer']);
  });

  it('never fails a request for a faulty observer', async () => {
    const server = await serve(answering(captured));
    const onAttempt = () => {
      throw new Error('observer broken');
    };
    await expect(clientFor(server.baseUrl, { onAttempt }).capture(captureRequest)).resolves.toMatchObject({
      EXECCODE: '0000',
    });
  });

  it('land in recon_service_request_duration_seconds by operation and outcome', async () => {
    const server = await serve(answering(answer('capture', '5003'), captured));
    const registry = createMetricsRegistry();
    await clientFor(server.baseUrl, { onAttempt: registerServiceRequestMetrics(registry) }).capture(captureRequest);
    const text = await registry.metrics();
    expect(text).toContain('recon_service_request_duration_seconds_count{operation="capture",outcome="5xxx"} 1\n');
    expect(text).toContain('recon_service_request_duration_seconds_count{operation="capture",outcome="0xxx"} 1\n');
  });
});
