import { createServer } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { decodeNotification, encodeNotification } from '@recon/protocol';
import { createBoundedServer, DEFAULT_LISTENER_LIMITS } from '@recon/protocol';
import {
  createNotificationOutbox,
  type NotificationOutboxOptions,
  type OutboxEvent,
} from '../src/notifications/notification-outbox.ts';
import { closeServer, listenOnLoopback, refusingBaseUrl } from './support/loopback.ts';
import { startNotificationReceiver, type NotificationReceiver } from './support/notification-receiver.ts';

const encode: NotificationOutboxOptions['encode'] = (fields) => {
  const body = encodeNotification(fields, 'secret');
  return { body, fields: decodeNotification(body) };
};

describe('notification outbox', () => {
  const cleanups: Array<() => Promise<void> | void> = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0)) await cleanup();
  });
  async function receiver(refuseFirst: number): Promise<NotificationReceiver> {
    const started = await startNotificationReceiver({ refuseFirst });
    cleanups.push(() => started.close());
    return started;
  }

  it('gives up after its attempts, waiting twice as long after each failure up to maxDelayMs', async () => {
    const merchant = await receiver(100);
    const events: OutboxEvent[] = [];
    const outbox = createNotificationOutbox({
      url: merchant.url,
      encode,
      retry: { attempts: 5, baseDelayMs: 5, maxDelayMs: 20 },
      onEvent: (e) => events.push(e),
    });
    cleanups.push(() => outbox.close());
    outbox.send({ ORDERID: 'A' });
    await outbox.idle();
    expect(merchant.received).toHaveLength(5);
    expect(events.flatMap((e) => (e.type === 'retrying' ? [e.delayMs] : []))).toEqual([5, 10, 20, 20]);
    expect(outbox.deliveries()[0]).toMatchObject({
      state: 'failed',
      attempts: 5,
      lastError: expect.stringMatching(/HTTP (500|200)/),
    });
    expect(events.at(-1)?.type).toBe('failed');
  });

  it('delivers the notifications of one transaction in the order they were sent', async () => {
    const merchant = await receiver(1);
    const outbox = createNotificationOutbox({ url: merchant.url, encode, retry: { baseDelayMs: 20 } });
    cleanups.push(() => outbox.close());
    outbox.send({ TRANSACTIONID: 'T1', EXECCODE: '0003' });
    outbox.send({ TRANSACTIONID: 'T1', EXECCODE: '0000' });
    await outbox.idle();
    const arrivals = merchant.received.map(({ body, answeredOk }) => [
      new URLSearchParams(body).get('EXECCODE'),
      answeredOk,
    ]);
    expect(arrivals).toEqual([
      ['0003', false],
      ['0003', true],
      ['0000', true],
    ]);
  });

  it('POSTs at most maxInFlight at once: a merchant that takes two connections per client gets thirty at the first attempt', async () => {
    const merchant = createBoundedServer(
      (request, response) => {
        request.resume();
        request.on('end', () => response.end('OK'));
      },
      { ...DEFAULT_LISTENER_LIMITS, maxConnectionsPerClient: 2 },
    );
    const baseUrl = await listenOnLoopback(merchant);
    cleanups.push(() => closeServer(merchant));
    const outbox = createNotificationOutbox({ url: `${baseUrl}/`, encode, maxInFlight: 2, retry: { attempts: 1 } });
    cleanups.push(() => outbox.close());
    for (let n = 1; n <= 30; n++) outbox.send({ TRANSACTIONID: `T${n}`, EXECCODE: '0000' });
    await outbox.idle();
    expect(outbox.deliveries().map((delivery) => [delivery.state, delivery.attempts])).toEqual(
      Array.from({ length: 30 }, () => ['delivered', 1]),
    );
  });

  it('retries a merchant that cannot be reached, and reports why', async () => {
    const { baseUrl } = await refusingBaseUrl();
    const outbox = createNotificationOutbox({ url: `${baseUrl}/`, encode, retry: { attempts: 2, baseDelayMs: 1 } });
    outbox.send({ ORDERID: 'A' });
    await outbox.idle();
    expect(outbox.deliveries()[0]).toMatchObject({
      state: 'failed',
      attempts: 2,
      lastError: expect.stringContaining('ECONNREFUSED'),
    });
  });

  it('abandons an attempt the merchant does not answer in time', async () => {
    const silent = createServer(() => undefined);
    const baseUrl = await listenOnLoopback(silent);
    cleanups.push(() => closeServer(silent));
    const outbox = createNotificationOutbox({
      url: `${baseUrl}/`,
      encode,
      retry: { attempts: 2, baseDelayMs: 1 },
      timeoutMs: 50,
    });
    outbox.send({ ORDERID: 'A' });
    await outbox.idle();
    expect(outbox.deliveries()[0]).toMatchObject({
      state: 'failed',
      attempts: 2,
      lastError: expect.stringMatching(/timeout/i),
    });
  });

  it('records notifications as unsent when no URL is configured', async () => {
    const outbox = createNotificationOutbox({ url: undefined, encode });
    const delivery = outbox.send({ ORDERID: 'A', AMOUNT: '100' });
    await outbox.idle();
    expect(delivery).toMatchObject({ state: 'unsent', attempts: 0 });
    expect(delivery.fields).toMatchObject({
      ORDERID: 'A',
      AMOUNT: '100',
      HASH: expect.stringMatching(/^[0-9a-f]{64}$/),
    });
  });

  it('stops retrying on close: pending deliveries end as failed and idle resolves', async () => {
    const merchant = await receiver(100);
    const outbox = createNotificationOutbox({ url: merchant.url, encode, retry: { baseDelayMs: 3_600_000 } });
    outbox.send({ ORDERID: 'A' });
    await merchant.receivedCount(1);
    outbox.close();
    await outbox.idle();
    expect(outbox.deliveries()[0]).toMatchObject({
      state: 'failed',
      attempts: 1,
      lastError: expect.stringContaining('closed'),
    });
    expect(merchant.received).toHaveLength(1);
    expect(outbox.send({ ORDERID: 'B' }).state).toBe('unsent');
  });

  it('keeps delivering when the event listener throws', async () => {
    const merchant = await receiver(1);
    const outbox = createNotificationOutbox({
      url: merchant.url,
      encode,
      retry: { baseDelayMs: 1 },
      onEvent: () => {
        throw new Error('listener bug');
      },
    });
    outbox.send({ ORDERID: 'A' });
    await outbox.idle();
    expect(outbox.deliveries()[0]).toMatchObject({ state: 'delivered', attempts: 2 });
  });
});
