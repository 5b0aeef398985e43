import { setTimeout as sleep } from 'node:timers/promises';
import { neverThrowing } from '../never-throwing.ts';
import { createBoundedFormPoster } from './bounded-form-poster.ts';

/**
 * Sends notifications to the merchant's URL as form POSTs and retries with exponential backoff until the
 * merchant answers the body `OK`, for a bounded number of attempts. Sending never blocks the request that
 * caused it and never throws: each delivery runs in the background and reports through `onEvent`.
 * Notifications of one TRANSACTIONID are delivered in the order they were sent, each after the previous one
 * is delivered or given up: a pending approval's 0003 retried after its final 0000 would otherwise reach the
 * merchant last and read as the transaction's current state. At most `maxInFlight` POSTs are in flight at once, on
 * as many connections.
 */
export type DeliveryState = 'pending' | 'delivered' | 'failed' | 'unsent';

export interface NotificationDelivery {
  readonly id: number;
  /** The signed fields as sent, HASH included. */
  readonly fields: Readonly<Record<string, string>>;
  readonly state: DeliveryState;
  readonly attempts: number;
  readonly lastError?: string;
}

export type OutboxEvent =
  | { readonly type: 'delivered'; readonly delivery: NotificationDelivery }
  | { readonly type: 'retrying'; readonly delivery: NotificationDelivery; readonly delayMs: number }
  | { readonly type: 'failed'; readonly delivery: NotificationDelivery };

export interface NotificationRetryOptions {
  /** Attempts per notification before it is given up. Default 8. */
  readonly maxAttempts?: number;
  /** Delay before the first retry; doubles after each failure. Default 1000 ms. */
  readonly baseDelayMs?: number;
  readonly maxDelayMs?: number;
  /** Time allowed for one attempt. Default 10 s. */
  readonly timeoutMs?: number;
}

export interface NotificationOutboxOptions extends NotificationRetryOptions {
  /** Where to POST; without it notifications are recorded as `unsent`. */
  readonly url: string | undefined;
  /** POSTs in flight at once, whatever their transaction, and connections open; the others wait their turn. Default 8. */
  readonly maxInFlight?: number;
  /** Turns signed fields into the form body. */
  readonly encode: (fields: Record<string, string>) => { body: string; fields: Record<string, string> };
  readonly onEvent?: (event: OutboxEvent) => void;
}

export interface NotificationOutbox {
  send(fields: Record<string, string>): NotificationDelivery;
  /** Resolves once no delivery is pending (delivered, given up, or the outbox closed). */
  idle(): Promise<void>;
  /** Every notification so far, in the order they were sent, with its current state. */
  deliveries(): NotificationDelivery[];
  /** Stops retrying; pending deliveries end as failed. */
  close(): void;
}

export function createNotificationOutbox(options: NotificationOutboxOptions): NotificationOutbox {
  const maxAttempts = options.maxAttempts ?? 8;
  const baseDelayMs = options.baseDelayMs ?? 1000;
  const maxDelayMs = options.maxDelayMs ?? 60_000;
  const timeoutMs = options.timeoutMs ?? 10_000;
  const poster = createBoundedFormPoster(options.maxInFlight ?? 8);
  const closing = new AbortController();
  const records: NotificationDelivery[] = [];
  /** The last delivery queued per TRANSACTIONID, which the next one of that transaction waits for. */
  const lastOfTransaction = new Map<string, Promise<void>>();
  let pending = 0;
  let idleWaiters: Array<() => void> = [];

  function replace(id: number, patch: Partial<NotificationDelivery>): NotificationDelivery {
    const record = Object.freeze({ ...records[id - 1]!, ...patch });
    records[id - 1] = record;
    return record;
  }

  const emit = neverThrowing(options.onEvent);

  function settle(): void {
    pending -= 1;
    if (pending > 0) return;
    const waiters = idleWaiters;
    idleWaiters = [];
    for (const wake of waiters) wake();
  }

  /** One POST, in its turn: a delivery waiting to retry holds no place in line. */
  async function attempt(url: string, body: string): Promise<string | undefined> {
    try {
      const { status, text } = await poster.post(url, body, { timeoutMs, signal: closing.signal });
      if (status >= 200 && status < 300 && text.trim() === 'OK') return undefined;
      return `HTTP ${status} answered ${JSON.stringify(text.slice(0, 80))} instead of OK`;
    } catch (error) {
      return error instanceof Error ? (error.cause instanceof Error ? error.cause.message : error.message) : String(error);
    }
  }

  /** Resolves after `ms`, or at once when the outbox closes (the timer is cleared then, so close() frees the process). */
  function wait(ms: number): Promise<void> {
    return sleep(ms, undefined, { signal: closing.signal }).catch(() => undefined);
  }

  async function deliver(id: number, url: string, body: string): Promise<void> {
    if (closing.signal.aborted) {
      // Queued behind an earlier notification of its transaction when the outbox closed.
      emit({ type: 'failed', delivery: replace(id, { state: 'failed', lastError: 'outbox closed before sending' }) });
      return;
    }
    for (let attempts = 1; ; attempts++) {
      const error = await attempt(url, body);
      if (error === undefined) {
        emit({ type: 'delivered', delivery: replace(id, { state: 'delivered', attempts, lastError: undefined }) });
        return;
      }
      if (attempts < maxAttempts && !closing.signal.aborted) {
        const delayMs = Math.min(maxDelayMs, baseDelayMs * 2 ** (attempts - 1));
        emit({ type: 'retrying', delivery: replace(id, { attempts, lastError: error }), delayMs });
        await wait(delayMs);
        if (!closing.signal.aborted) continue;
      }
      const reason = closing.signal.aborted ? `${error} (outbox closed)` : error;
      emit({ type: 'failed', delivery: replace(id, { state: 'failed', attempts, lastError: reason }) });
      return;
    }
  }

  return {
    send(fields) {
      const encoded = options.encode(fields);
      const id = records.length + 1;
      const url = options.url;
      const state: DeliveryState = url && !closing.signal.aborted ? 'pending' : 'unsent';
      records.push(Object.freeze({ id, fields: Object.freeze({ ...encoded.fields }), state, attempts: 0 }));
      if (state === 'pending') {
        pending += 1;
        const key = encoded.fields['TRANSACTIONID'] ?? `#${id}`;
        const previous = lastOfTransaction.get(key) ?? Promise.resolve();
        const delivery = previous
          .then(() => deliver(id, url!, encoded.body))
          .catch(() => undefined)
          .finally(() => {
            if (lastOfTransaction.get(key) === delivery) lastOfTransaction.delete(key);
            settle();
          });
        lastOfTransaction.set(key, delivery);
      }
      return records[id - 1]!;
    },
    idle() {
      if (pending === 0) return Promise.resolve();
      return new Promise((resolve) => idleWaiters.push(resolve));
    },
    deliveries: () => [...records],
    close() {
      closing.abort();
      poster.close();
    },
  };
}
