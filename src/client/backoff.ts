import { setTimeout as sleep } from 'node:timers/promises';

export interface RetryPolicy {
  /** Attempts in all, the first included: 1 never retries. */
  readonly attempts: number;
  readonly baseDelayMs: number;
}

/**
 * Delay before retry number `retry` (1 for the first retry): exponential, with "equal jitter" (half
 * fixed, half random) so that clients failing together do not come back together.
 */
export function backoffDelay(retry: number, baseDelayMs: number, random: () => number = Math.random): number {
  const ceiling = baseDelayMs * 2 ** (retry - 1);
  return ceiling / 2 + random() * (ceiling / 2);
}

/** Runs `attempt` until it succeeds, `shouldRetry` says no, or the attempts are spent; the last error is thrown. */
export async function withRetries<T>(
  policy: RetryPolicy,
  shouldRetry: (error: unknown) => boolean,
  attempt: () => Promise<T>,
): Promise<T> {
  for (let made = 1; ; made++) {
    try {
      return await attempt();
    } catch (error) {
      if (made >= policy.attempts || !shouldRetry(error)) throw error;
      await sleep(backoffDelay(made, policy.baseDelayMs));
    }
  }
}
