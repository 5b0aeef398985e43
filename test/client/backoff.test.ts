import { describe, expect, it } from 'vitest';
import { backoffDelay, withRetries } from '../../src/client/backoff.ts';

describe('backoffDelay', () => {
  it('doubles its ceiling on each retry, with jitter over the upper half', () => {
    expect([1, 2, 3, 4].map((retry) => backoffDelay(retry, 100, () => 0))).toEqual([50, 100, 200, 400]);
    expect([1, 2, 3, 4].map((retry) => backoffDelay(retry, 100, () => 1))).toEqual([100, 200, 400, 800]);
    expect(backoffDelay(2, 100, () => 0.5)).toBe(150);
  });
});

describe('withRetries', () => {
  it('stops at the first success, at a refused error, or after the attempts', async () => {
    const policy = { attempts: 3, baseDelayMs: 1 };
    let calls = 0;
    await expect(withRetries(policy, () => true, async () => (++calls < 2 ? Promise.reject(new Error('x')) : 'ok'))).resolves.toBe('ok');
    expect(calls).toBe(2);

    calls = 0;
    await expect(withRetries(policy, () => false, async () => Promise.reject(new Error(`no ${++calls}`)))).rejects.toThrow('no 1');

    calls = 0;
    await expect(withRetries(policy, () => true, async () => Promise.reject(new Error(`no ${++calls}`)))).rejects.toThrow('no 3');
  });
});
