import { describe, expect, it } from 'vitest';
import { retry } from '@recon/protocol';
import { createExportDeliveries } from '../../src/export/export-deliveries.ts';

const quick = { attempts: 4, baseDelayMs: 1, maxDelayMs: 5 };

describe('createExportDeliveries', () => {
  it('runs deliveries in the background, hands a failure to onError and never throws', async () => {
    const failures: [string, string][] = [];
    const deliveries = createExportDeliveries({
      retry: quick,
      onError: (error, label) => failures.push([label, (error as Error).message]),
    });
    const done: string[] = [];
    deliveries.start('ok', async () => void done.push('ok'));
    deliveries.start('broken', async () => {
      throw new Error('receiver down');
    });
    await deliveries.idle();
    expect(done).toEqual(['ok']);
    expect(failures).toEqual([['broken', 'receiver down']]);
    expect(deliveries.retry).toEqual(quick);
  });

  it('survives an onError listener that throws', async () => {
    const deliveries = createExportDeliveries({
      onError: () => {
        throw new Error('listener bug');
      },
    });
    deliveries.start('broken', async () => {
      throw new Error('receiver down');
    });
    await expect(deliveries.idle()).resolves.toBeUndefined();
  });

  it('idle() also waits for a delivery started while waiting', async () => {
    const deliveries = createExportDeliveries();
    const order: string[] = [];
    deliveries.start('first', async () => {
      await new Promise(setImmediate);
      deliveries.start('second', async () => {
        await new Promise(setImmediate);
        order.push('second');
      });
      order.push('first');
    });
    await deliveries.idle();
    expect(order).toEqual(['first', 'second']);
  });

  it('close() abandons a delivery waiting between retries, without reporting it', async () => {
    const failures: unknown[] = [];
    const deliveries = createExportDeliveries({
      retry: { attempts: 5, baseDelayMs: 60_000, maxDelayMs: 60_000 },
      onError: (error) => failures.push(error),
    });
    let calls = 0;
    deliveries.start('slow', (signal) =>
      retry(
        async () => {
          calls += 1;
          throw new Error('receiver down');
        },
        deliveries.retry,
        { signal },
      ),
    );
    // Past the first failure's microtasks: the delivery now sleeps before its second attempt.
    await new Promise(setImmediate);
    await deliveries.close();
    expect(calls).toBe(1);
    expect(failures).toEqual([]);
  });
});
