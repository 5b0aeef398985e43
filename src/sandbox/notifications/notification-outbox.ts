/**
 * Sends notifications to the merchant's URL as form POSTs and retries with exponential backoff until the
 * merchant answers the body `OK`, for a bounded number of attempts. Sending never blocks the request that
 * caused it and never throws: each delivery runs its own background chain and reports through `onEvent`.
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
  const closing = new AbortController();
  const records: NotificationDelivery[] = [];
  let pending = 0;
  let idleWaiters: Array<() => void> = [];

  function replace(id: number, patch: Partial<NotificationDelivery>): NotificationDelivery {
    const record = Object.freeze({ ...records[id - 1]!, ...patch });
    records[id - 1] = record;
    return record;
  }

  function emit(event: OutboxEvent): void {
    try {
      options.onEvent?.(event);
    } catch {
      // A faulty listener must not stop deliveries.
    }
  }

  function settle(): void {
    pending -= 1;
    if (pending > 0) return;
    const waiters = idleWaiters;
    idleWaiters = [];
    for (const wake of waiters) wake();
  }

  async function attempt(url: string, body: string): Promise<string | undefined> {
    try {
      const response = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body,
        signal: AbortSignal.any([AbortSignal.timeout(timeoutMs), closing.signal]),
      });
      const text = await response.text();
      if (response.ok && text.trim() === 'OK') return undefined;
      return `HTTP ${response.status} answered ${JSON.stringify(text.slice(0, 80))} instead of OK`;
    } catch (error) {
      return error instanceof Error ? (error.cause instanceof Error ? error.cause.message : error.message) : String(error);
    }
  }

  function wait(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, ms);
      closing.signal.addEventListener('abort', () => {
        clearTimeout(timer);
        resolve();
      }, { once: true });
    });
  }

  async function deliver(id: number, url: string, body: string): Promise<void> {
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
      }
      if (attempts >= maxAttempts || closing.signal.aborted) {
        const reason = closing.signal.aborted ? `${error} (outbox closed)` : error;
        emit({ type: 'failed', delivery: replace(id, { state: 'failed', attempts, lastError: reason }) });
        return;
      }
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
        void deliver(id, url!, encoded.body).catch(() => undefined).finally(settle);
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
    },
  };
}
