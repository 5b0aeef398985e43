import { setTimeout as sleep } from 'node:timers/promises';

/**
 * Retries with exponential backoff, one way for both ends: recon's client retrying a request, the sandbox
 * retrying an export delivery or a notification.
 */
export interface RetryPolicy {
  /** Attempts in all, the first included: 1 never retries. */
  readonly attempts: number;
  /** The wait before the first retry; it doubles before each next one. */
  readonly baseDelayMs: number;
  /** The longest wait; unbounded when absent. */
  readonly maxDelayMs?: number;
  /**
   * "Equal jitter": half of each wait fixed, half random, so that clients failing together do not come back
   * together. Off by default, where the waits are exactly the doubling ones.
   */
  readonly jitter?: boolean;
}

export interface RetryOptions {
  /** Whether a failure may be tried again; every one may by default. */
  readonly shouldRetry?: (error: unknown) => boolean;
  /** Stops retrying: a wait in progress ends at once (its timer cleared) and the last failure is thrown. */
  readonly signal?: AbortSignal;
  /** Each failure about to be retried: the attempt that failed (1 for the first) and the wait before the next. */
  readonly onRetry?: (error: unknown, attempt: number, delayMs: number) => void;
}

/** The wait before retry number `retry` (1 for the first retry). */
export function retryDelay(retry: number, policy: RetryPolicy, random: () => number = Math.random): number {
  const ceiling = Math.min(policy.baseDelayMs * 2 ** (retry - 1), policy.maxDelayMs ?? Infinity);
  return policy.jitter ? ceiling / 2 + random() * (ceiling / 2) : ceiling;
}

/**
 * Runs `attempt` (given its number, 1 for the first) until it succeeds, `shouldRetry` says no, the attempts are
 * spent or `signal` aborts; the last failure is thrown.
 */
export async function retry<T>(
  attempt: (attemptNumber: number) => Promise<T>,
  policy: RetryPolicy,
  options: RetryOptions = {},
): Promise<T> {
  const { shouldRetry = () => true, signal, onRetry } = options;
  for (let made = 1; ; made++) {
    try {
      return await attempt(made);
    } catch (error) {
      if (made >= policy.attempts || signal?.aborted || !shouldRetry(error)) throw error;
      const delayMs = retryDelay(made, policy);
      onRetry?.(error, made, delayMs);
      // An abort rejects the wait; the failure that led to it is the one worth reporting.
      await sleep(delayMs, undefined, { signal }).catch(() => undefined);
      if (signal?.aborted) throw error;
    }
  }
}
