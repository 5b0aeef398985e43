import { setTimeout as sleep } from 'node:timers/promises';
import { isDatabaseUnavailable } from './sql-state.ts';

/**
 * `work`, tried again while it fails because the database cannot be reached (isDatabaseUnavailable), for at most
 * `waitMs`: a write that must not be lost to a moment's outage, such as a claim handed back. Waits 100 ms, then twice
 * as long each time up to 2 s. Any other error, or the same error after `waitMs`, is thrown as it came.
 */
export async function retryWhileUnavailable<T>(work: () => Promise<T>, waitMs: number): Promise<T> {
  const giveUpAt = Date.now() + waitMs;
  for (let pauseMs = 100; ; pauseMs = Math.min(pauseMs * 2, 2000)) {
    try {
      return await work();
    } catch (error) {
      if (!isDatabaseUnavailable(error) || Date.now() + pauseMs > giveUpAt) throw error;
      await sleep(pauseMs);
    }
  }
}
