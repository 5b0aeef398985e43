import type { NotificationDelivery, OutboxEvent } from '../notifications/notification-outbox.ts';

/**
 * The command's stderr account of its notifications. A merchant that is not listening yet makes every notification
 * fail and retry, hundreds of attempts in seconds: those are counted and written as one summary line at most every
 * `intervalMs`, the first at once. A notification given up is written once, on its own line, when it is given up.
 * Once the sandbox is stopping, the notifications it abandons are counted in the last line instead.
 */
export interface NotificationLog {
  record(event: OutboxEvent): void;
  /** From now on a notification that fails was abandoned by the stop, not given up after its attempts. */
  stopping(): void;
  /** Writes what is not written yet and stops the timer. */
  end(): void;
}

export interface NotificationLogOptions {
  /** Writes one line (without its newline). */
  readonly write: (line: string) => void;
  /** Shortest time between two summary lines. Default 5 s. */
  readonly intervalMs?: number;
  readonly now?: () => number;
}

const NOTIFICATION_SUMMARY_INTERVAL_MS = 5_000;

export function createNotificationLog(options: NotificationLogOptions): NotificationLog {
  const { write } = options;
  const intervalMs = options.intervalMs ?? NOTIFICATION_SUMMARY_INTERVAL_MS;
  const now = options.now ?? Date.now;
  /** Notifications that failed an attempt and wait for their next one. */
  const waiting = new Set<number>();
  let failedAttempts = 0;
  let delivered = 0;
  let lastError: string | undefined;
  let abandoned = 0;
  let isStopping = false;
  let lastSummaryAt: number | undefined;
  let timer: NodeJS.Timeout | undefined;

  function summarize(): void {
    clearTimeout(timer);
    timer = undefined;
    if (failedAttempts === 0 && delivered === 0) return;
    const at = now();
    const window = lastSummaryAt === undefined ? '' : ` (last ${Math.round((at - lastSummaryAt) / 1000)} s)`;
    const parts = [
      ...(failedAttempts === 0
        ? []
        : [`${failedAttempts} ${failedAttempts === 1 ? 'attempt' : 'attempts'} failed (last: ${lastError})`]),
      ...(delivered === 0 ? [] : [`${delivered} delivered`]),
    ];
    write(`notifications${window}: ${parts.join(', ')}; ${waiting.size} waiting to retry`);
    failedAttempts = 0;
    delivered = 0;
    lastSummaryAt = at;
  }

  /** At once when no summary was written for an interval, else once that interval is over. */
  function summarizeSoon(): void {
    if (timer !== undefined) return;
    const wait = lastSummaryAt === undefined ? 0 : lastSummaryAt + intervalMs - now();
    if (wait <= 0) return summarize();
    timer = setTimeout(summarize, wait);
    // A summary still due never keeps the process alive: end() writes it.
    timer.unref();
  }

  return {
    record(event) {
      const { delivery } = event;
      switch (event.type) {
        case 'retrying':
          waiting.add(delivery.id);
          failedAttempts += 1;
          lastError = delivery.lastError;
          return summarizeSoon();
        case 'delivered':
          waiting.delete(delivery.id);
          delivered += 1;
          return summarizeSoon();
        case 'failed':
          waiting.delete(delivery.id);
          if (isStopping) abandoned += 1;
          else write(`${subject(delivery)} given up after ${delivery.attempts} attempts: ${delivery.lastError}`);
      }
    },
    stopping() {
      isStopping = true;
    },
    end() {
      summarize();
      if (abandoned > 0) {
        write(`${abandoned} ${abandoned === 1 ? 'notification' : 'notifications'} not delivered: the sandbox stopped`);
        abandoned = 0;
      }
    },
  };
}

function subject(delivery: NotificationDelivery): string {
  return `notification ${delivery.fields['OPERATIONTYPE']} ${delivery.fields['TRANSACTIONID']}`;
}
