import type { RetryPolicy } from '@recon/protocol';
import { neverThrowing } from '../never-throwing.ts';

/** Without jitter: a sandbox's retries come at the waits it announces, which its tests and its CLI's log rely on. */
export const DEFAULT_DELIVERY_RETRY: RetryPolicy = { attempts: 8, baseDelayMs: 500, maxDelayMs: 60_000 };

/** A delivery, or one attempt of it; `signal` aborts it when the sandbox closes. */
export type DeliveryWork = (signal: AbortSignal) => Promise<void>;

/**
 * The asynchronous exports (CALLBACKURL, MAILTO) in flight. Deliveries run in the background and never throw:
 * a delivery that fails (after its retries, see the protocol's `retry`) is handed to `onError`. Tests await `idle()`.
 */
export interface ExportDeliveries {
  /** How the deliveries retry a failed attempt. */
  readonly retry: RetryPolicy;
  /** Runs `delivery` in the background; `label` names it in errors. */
  start(label: string, delivery: DeliveryWork): void;
  /** Resolves once every delivery started so far has succeeded or given up. */
  idle(): Promise<void>;
  /** Abandons the deliveries in flight (their pending retries included) and resolves when they have stopped. */
  close(): Promise<void>;
}

export interface ExportDeliveriesOptions {
  readonly retry?: Partial<RetryPolicy>;
  /** A delivery that gave up. Default: one line on stderr. */
  readonly onError?: (error: unknown, label: string) => void;
}

export function createExportDeliveries(options: ExportDeliveriesOptions = {}): ExportDeliveries {
  const policy: RetryPolicy = { ...DEFAULT_DELIVERY_RETRY, ...options.retry };
  const report = neverThrowing(options.onError ?? reportToStderr);
  const inFlight = new Set<Promise<void>>();
  const closing = new AbortController();

  async function deliver(label: string, delivery: DeliveryWork): Promise<void> {
    try {
      await delivery(closing.signal);
    } catch (error) {
      if (!closing.signal.aborted) report(error, label);
    }
  }

  async function idle(): Promise<void> {
    // A delivery may start while we wait; loop until none is left.
    while (inFlight.size > 0) await Promise.all(inFlight);
  }

  return {
    retry: policy,
    start(label, delivery) {
      const running = deliver(label, delivery).finally(() => inFlight.delete(running));
      inFlight.add(running);
    },
    idle,
    async close() {
      closing.abort();
      await idle();
    },
  };
}

function reportToStderr(error: unknown, label: string): void {
  const reason = error instanceof Error ? error.message : String(error);
  process.stderr.write(`sandbox: export delivery ${label} failed: ${reason}\n`);
}
