import { describe, expect, it } from 'vitest';
import { retry, retryDelay } from '@recon/protocol';

describe('retryDelay', () => {
  it('doubles the wait on each retry', () => {
    expect([1, 2, 3, 4].map((n) => retryDelay(n, { attempts: 5, baseDelayMs: 100 }))).toEqual([100, 200, 400, 800]);
  });

  it('caps the wait at maxDelayMs', () => {
    expect([1, 2, 3, 4].map((n) => retryDelay(n, { attempts: 5, baseDelayMs: 5, maxDelayMs: 20 }))).toEqual([
      5, 10, 20, 20,
    ]);
  });

  it('with jitter, doubles its ceiling on each retry, with jitter over the upper half', () => {
    const policy = { attempts: 5, baseDelayMs: 100, jitter: true };
    expect([1, 2, 3, 4].map((n) => retryDelay(n, policy, () => 0))).toEqual([50, 100, 200, 400]);
    expect([1, 2, 3, 4].map((n) => retryDelay(n, policy, () => 1))).toEqual([100, 200, 400, 800]);
    expect(retryDelay(2, policy, () => 0.5)).toBe(150);
    expect(retryDelay(4, { ...policy, maxDelayMs: 300 }, () => 1)).toBe(300);
  });
});

describe('retry', () => {
  const quick = { attempts: 4, baseDelayMs: 1, maxDelayMs: 5 };

  it('stops at the first success, at a refused error, or after the attempts', async () => {
    const policy = { attempts: 3, baseDelayMs: 1, jitter: true };
    const always = { shouldRetry: () => true };
    let calls = 0;
    await expect(
      retry(async () => (++calls < 2 ? Promise.reject(new Error('x')) : 'ok'), policy, always),
    ).resolves.toBe('ok');
    expect(calls).toBe(2);

    calls = 0;
    await expect(
      retry(async () => Promise.reject(new Error(`no ${++calls}`)), policy, { shouldRetry: () => false }),
    ).rejects.toThrow('no 1');

    calls = 0;
    await expect(retry(async () => Promise.reject(new Error(`no ${++calls}`)), policy, always)).rejects.toThrow('no 3');
  });

  it('retries a failing attempt until it succeeds, telling each attempt its number', async () => {
    const seen: number[] = [];
    await retry(async (attempt) => {
      seen.push(attempt);
      if (attempt < 3) throw new Error(`failure ${attempt}`);
    }, quick);
    expect(seen).toEqual([1, 2, 3]);
  });

  it('stops after the bounded number of attempts with the last failure', async () => {
    let calls = 0;
    const failing = async () => {
      calls += 1;
      throw new Error(`failure ${calls}`);
    };
    await expect(retry(failing, quick)).rejects.toThrow('failure 4');
    expect(calls).toBe(4);
  });

  it('tells onRetry of each failure it retries, with the wait before the next attempt', async () => {
    const retried: [string, number, number][] = [];
    await expect(
      retry(
        async (attempt) => {
          throw new Error(`failure ${attempt}`);
        },
        quick,
        { onRetry: (error, attempt, delayMs) => retried.push([(error as Error).message, attempt, delayMs]) },
      ),
    ).rejects.toThrow('failure 4');
    expect(retried).toEqual([
      ['failure 1', 1, 1],
      ['failure 2', 2, 2],
      ['failure 3', 3, 4],
    ]);
  });

  it('ends a wait when the signal aborts, throwing the failure rather than the abort', async () => {
    const stop = new AbortController();
    let calls = 0;
    const started = Date.now();
    const retrying = retry(
      async () => {
        calls += 1;
        throw new Error('receiver down');
      },
      { attempts: 5, baseDelayMs: 60_000 },
      { signal: stop.signal },
    );
    // Past the first failure's microtasks: the retry now waits before its second attempt.
    await new Promise(setImmediate);
    stop.abort();
    await expect(retrying).rejects.toThrow('receiver down');
    expect(calls).toBe(1);
    expect(Date.now() - started).toBeLessThan(30_000);
  });

  it('does not retry a failure that happened once the signal had aborted', async () => {
    const stop = new AbortController();
    let calls = 0;
    await expect(
      retry(
        async () => {
          calls += 1;
          stop.abort();
          throw new Error('aborted mid-attempt');
        },
        quick,
        { signal: stop.signal },
      ),
    ).rejects.toThrow('aborted mid-attempt');
    expect(calls).toBe(1);
  });
});
