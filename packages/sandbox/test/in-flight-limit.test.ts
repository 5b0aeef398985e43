import { describe, expect, it } from 'vitest';
import { createInFlightLimit } from '../src/notifications/in-flight-limit.ts';

describe('createInFlightLimit', () => {
  it('runs at most `size` at once, the others in the order they came, each as soon as a place frees', async () => {
    const limit = createInFlightLimit(2);
    const started: number[] = [];
    const finish: (() => void)[] = [];
    const runs = [1, 2, 3, 4, 5].map((n) =>
      limit.run(async () => {
        started.push(n);
        await new Promise<void>((resolve) => (finish[n] = resolve));
        return n * 10;
      }),
    );
    // Each step lets every started run reach its wait: what starts then is all that can.
    const settle = () => new Promise<void>((resolve) => setImmediate(resolve));
    await settle();
    expect(started).toEqual([1, 2]);
    finish[2]!();
    await settle();
    expect(started).toEqual([1, 2, 3]);
    finish[1]!();
    finish[3]!();
    await settle();
    expect(started).toEqual([1, 2, 3, 4, 5]);
    finish[4]!();
    finish[5]!();
    expect(await Promise.all(runs)).toEqual([10, 20, 30, 40, 50]);
  });

  it('frees the place of a run that failed', async () => {
    const limit = createInFlightLimit(1);
    await expect(limit.run(() => Promise.reject(new Error('refused')))).rejects.toThrow('refused');
    expect(await limit.run(() => Promise.resolve('next'))).toBe('next');
  });

  it('takes a whole number of places, 1 or more', () => {
    expect(() => createInFlightLimit(0)).toThrow(RangeError);
    expect(() => createInFlightLimit(1.5)).toThrow(RangeError);
  });
});
