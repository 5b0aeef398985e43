import { decodeNotification, encodeNotification } from '@recon/protocol';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createNotificationLog } from '../src/cli/notification-log.ts';
import {
  createNotificationOutbox,
  type NotificationDelivery,
  type NotificationOutboxOptions,
  type OutboxEvent,
} from '../src/notifications/notification-outbox.ts';
import { refusingBaseUrl } from './support/loopback.ts';

const encode: NotificationOutboxOptions['encode'] = (fields) => {
  const body = encodeNotification(fields, 'secret');
  return { body, fields: decodeNotification(body) };
};

function delivery(id: number, patch: Partial<NotificationDelivery> = {}): NotificationDelivery {
  return {
    id,
    fields: { OPERATIONTYPE: 'payment', TRANSACTIONID: `T${id}` },
    state: 'pending',
    attempts: 1,
    lastError: 'connect ECONNREFUSED 127.0.0.1:18090',
    ...patch,
  };
}

const retrying = (id: number, attempts = 1): OutboxEvent => ({
  type: 'retrying',
  delivery: delivery(id, { attempts }),
  delayMs: 1000,
});

describe('notification log (the sandbox command stderr)', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('writes the first failed attempt at once, then one summary per interval however many attempts fail', () => {
    vi.useFakeTimers({ now: 0 });
    const lines: string[] = [];
    const log = createNotificationLog({ write: (line) => lines.push(line), intervalMs: 5000 });
    log.record(retrying(1));
    expect(lines).toEqual([
      'notifications: 1 attempt failed (last: connect ECONNREFUSED 127.0.0.1:18090); 1 waiting to retry',
    ]);
    for (let round = 0; round < 100; round++) {
      vi.advanceTimersByTime(40);
      for (let id = 1; id <= 4; id++) log.record(retrying(id, 2));
    }
    // 400 failed attempts in 4 s: still within the first interval.
    expect(lines).toHaveLength(1);
    vi.advanceTimersByTime(1000);
    expect(lines).toHaveLength(2);
    expect(lines[1]).toBe(
      'notifications (last 5 s): 400 attempts failed (last: connect ECONNREFUSED 127.0.0.1:18090); 4 waiting to retry',
    );
    // Nothing new: no line, however long it stays quiet.
    vi.advanceTimersByTime(60_000);
    expect(lines).toHaveLength(2);
    log.record({ type: 'delivered', delivery: delivery(1, { state: 'delivered', attempts: 3 }) });
    expect(lines[2]).toBe('notifications (last 60 s): 1 delivered; 3 waiting to retry');
  });

  it('writes a notification given up once, on its own line, and counts those the stop abandons in its last line', () => {
    vi.useFakeTimers({ now: 0 });
    const lines: string[] = [];
    const log = createNotificationLog({ write: (line) => lines.push(line), intervalMs: 5000 });
    log.record(retrying(1));
    log.record(retrying(2));
    log.record({ type: 'failed', delivery: delivery(1, { state: 'failed', attempts: 8 }) });
    expect(lines.slice(1)).toEqual([
      'notification payment T1 given up after 8 attempts: connect ECONNREFUSED 127.0.0.1:18090',
    ]);
    log.stopping();
    log.record({ type: 'failed', delivery: delivery(2, { state: 'failed', lastError: 'x (outbox closed)' }) });
    log.record({
      type: 'failed',
      delivery: delivery(3, { state: 'failed', lastError: 'outbox closed before sending' }),
    });
    expect(lines).toHaveLength(2);
    log.end();
    expect(lines.slice(2)).toEqual([
      'notifications (last 0 s): 1 attempt failed (last: connect ECONNREFUSED 127.0.0.1:18090); 0 waiting to retry',
      '2 notifications not delivered: the sandbox stopped',
    ]);
  });

  it('follows a real outbox to a merchant that refuses connections: each notification given up once, retries summed', async () => {
    const { baseUrl } = await refusingBaseUrl();
    const lines: string[] = [];
    const log = createNotificationLog({ write: (line) => lines.push(line), intervalMs: 3_600_000 });
    const outbox = createNotificationOutbox({
      url: `${baseUrl}/notify`,
      encode,
      retry: { attempts: 4, baseDelayMs: 1 },
      onEvent: (event) => log.record(event),
    });
    for (let n = 1; n <= 20; n++) outbox.send({ OPERATIONTYPE: 'capture', TRANSACTIONID: `T${n}` });
    await outbox.idle();
    outbox.close();
    log.end();
    const givenUp = lines.filter((line) => line.includes('given up'));
    expect(givenUp).toHaveLength(20);
    expect(new Set(givenUp).size).toBe(20);
    expect(givenUp[0]).toMatch(/^notification capture T\d+ given up after 4 attempts: connect ECONNREFUSED /);
    const summaries = lines.filter((line) => !line.includes('given up'));
    expect(summaries).toHaveLength(2);
    const failedAttempts = summaries.map((line) => Number(/(\d+) attempts? failed/.exec(line)![1]));
    expect(failedAttempts[0]! + failedAttempts[1]!).toBe(20 * 3);
    expect(summaries[1]).toMatch(/; 0 waiting to retry$/);
  });
});
