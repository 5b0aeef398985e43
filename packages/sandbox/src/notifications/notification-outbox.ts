import { retry, type RetryPolicy } from '@recon/protocol';
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

/** Without jitter: each wait is the one announced (OutboxEvent `retrying`) before it starts. */
const DEFAULT_NOTIFICATION_RETRY: RetryPolicy = { attempts: 8, baseDelayMs: 1000, maxDelayMs: 60_000 };

export interface NotificationOutboxOptions {
  /** Where to POST; without it notifications are recorded as `unsent`. */
  readonly url: string | undefined;
  /** POSTs in flight at once, whatever their transaction, and connections open; the others wait their turn. Default 8. */
  readonly maxInFlight?: number;
  /** Turns signed fields into the form body. */
  readonly encode: (fields: Record<string, string>) => { body: string; fields: Record<string, string> };
  readonly onEvent?: (event: OutboxEvent) => void;
  /** How a notification is tried again; DEFAULT_NOTIFICATION_RETRY for what is not given. */
  readonly retry?: Partial<RetryPolicy>;
  /** Time allowed for one attempt. Default 10 s. */
  readonly timeoutMs?: number;
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
  const policy: RetryPolicy = { ...DEFAULT_NOTIFICATION_RETRY, ...options.retry };
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
      return error instanceof Error
        ? error.cause instanceof Error
          ? error.cause.message
          : error.message
        : String(error);
    }
  }

  async function deliver(id: number, url: string, body: string): Promise<void> {
    if (closing.signal.aborted) {
      // Queued behind an earlier notification of its transaction when the outbox closed.
      emit({ type: 'failed', delivery: replace(id, { state: 'failed', lastError: 'outbox closed before sending' }) });
      return;
    }
    let attempts = 0;
    try {
      await retry(
        async (attemptNumber) => {
          attempts = attemptNumber;
          const error = await attempt(url, body);
          if (error !== undefined) throw new Error(error);
        },
        policy,
        {
          // Closing ends a wait at once and its timer with it, so that close() frees the process.
          signal: closing.signal,
          onRetry: (error, failed, delayMs) =>
            emit({
              type: 'retrying',
              delivery: replace(id, { attempts: failed, lastError: (error as Error).message }),
              delayMs,
            }),
        },
      );
    } catch (error) {
      const message = (error as Error).message;
      const reason = closing.signal.aborted ? `${message} (outbox closed)` : message;
      emit({ type: 'failed', delivery: replace(id, { state: 'failed', attempts, lastError: reason }) });
      return;
    }
    emit({ type: 'delivered', delivery: replace(id, { state: 'delivered', attempts, lastError: undefined }) });
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
