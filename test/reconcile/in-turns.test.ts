import { describe, expect, it } from 'vitest';
import { inTurns } from '../../src/reconcile/in-turns.ts';

/** Work whose every call waits until the test settles it, so that what runs at once is seen, not timed. */
function heldWork() {
  const calls: Array<{ item: number; resolve: (results: string[]) => void; reject: (error: Error) => void }> = [];
  const work = (item: number) => new Promise<string[]>((resolve, reject) => calls.push({ item, resolve, reject }));
  const started = () => calls.map((call) => call.item);
  return { calls, work, started };
}

/** Lets every promise callback that is ready run. */
const settle = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('inTurns', () => {
  it('runs as many items at once as it has workers, each worker taking the next item in order when it finishes one', async () => {
    const { calls, work, started } = heldWork();
    const done = inTurns([1, 2, 3, 4, 5], 2, work);
    await settle();
    expect(started()).toEqual([1, 2]);
    calls[1]!.resolve(['two']);
    await settle();
    expect(started()).toEqual([1, 2, 3]);
    calls[0]!.resolve(['one', 'one again']);
    calls[2]!.resolve([]);
    await settle();
    expect(started()).toEqual([1, 2, 3, 4, 5]);
    calls[4]!.resolve(['five']);
    calls[3]!.resolve(['four']);
    expect(await done).toEqual(['two', 'one', 'one again', 'five', 'four']);
  });

  it('starts no item after a failure, and throws its error once the items under way have ended', async () => {
    const { calls, work, started } = heldWork();
    let outcome: unknown = 'pending';
    const done = inTurns([1, 2, 3, 4], 2, work).then(
      (results) => (outcome = results),
      (error: Error) => (outcome = error),
    );
    await settle();
    calls[0]!.reject(new Error('slice 1 failed'));
    await settle();
    expect(started()).toEqual([1, 2]);
    // Item 2's transaction is still going: the caller must not clean up under it.
    expect(outcome).toBe('pending');
    calls[1]!.resolve(['two']);
    await done;
    expect((outcome as Error).message).toBe('slice 1 failed');
    // Item 2's worker, free again, took nothing more.
    expect(started()).toEqual([1, 2]);
  });

  it('uses no more workers than items, and gives nothing for nothing', async () => {
    const { calls, work, started } = heldWork();
    const done = inTurns([7], 4, work);
    await settle();
    expect(started()).toEqual([7]);
    calls[0]!.resolve(['seven']);
    expect(await done).toEqual(['seven']);
    expect(await inTurns([], 3, work)).toEqual([]);
  });
});
