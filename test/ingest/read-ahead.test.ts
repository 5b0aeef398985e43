import { setImmediate as turn } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { readAhead } from '../../src/ingest/read-ahead.ts';

const MARK = Symbol('mark');

/** A source that records how far it has been pulled, and can be told to fail. */
function source(items: (string | typeof MARK)[], failAt?: number) {
  const pulled: number[] = [];
  let closed = false;
  async function* generate() {
    try {
      for (let i = 0; i < items.length; i++) {
        if (i === failAt) throw new Error(`bad item ${i}`);
        pulled.push(i);
        yield items[i]!;
      }
    } finally {
      closed = true;
    }
  }
  return { iterable: generate(), pulled, isClosed: () => closed };
}

/** Lets the producer run until it waits: several turns of the event loop. */
async function settle() {
  for (let i = 0; i < 10; i++) await turn();
}

describe('readAhead', () => {
  it('hands over text as Buffers and markers as they are, in order', async () => {
    const { iterable } = source(['ab', MARK, 'cd', 'é']);
    const ahead = readAhead(iterable, 1024);
    const seen: unknown[] = [];
    for (let item = await ahead.next(); !item.done; item = await ahead.next()) {
      seen.push(Buffer.isBuffer(item.value) ? item.value.toString() : item.value);
    }
    expect(seen).toEqual(['ab', MARK, 'cd', 'é']);
    await ahead.close();
  });

  it('reads ahead of a consumer that waits, up to the limit, and on once it reads again', async () => {
    const { iterable, pulled } = source(['aaaa', 'bbbb', MARK, 'cccc', 'dddd', 'eeee']);
    const ahead = readAhead(iterable, 8);
    await settle();
    // Two items make the 8 bytes of the limit: the producer waits there, the consumer having read nothing.
    expect(pulled).toEqual([0, 1]);
    expect((await ahead.next()).value?.toString()).toBe('aaaa');
    await settle();
    // Four bytes waiting: the marker (which weighs nothing) and one more text come in, and the limit is reached again.
    expect(pulled).toEqual([0, 1, 2, 3]);
    await ahead.close();
  });

  it('throws the source error to the consumer after what came before it', async () => {
    const { iterable } = source(['ok', 'never'], 1);
    const ahead = readAhead(iterable, 1024);
    expect((await ahead.next()).value?.toString()).toBe('ok');
    await expect(ahead.next()).rejects.toThrow('bad item 1');
    await ahead.close();
  });

  it('stops a producer that waits at the limit, closing its source', async () => {
    const { iterable, pulled, isClosed } = source(['aaaa', 'bbbb', 'cccc']);
    const ahead = readAhead(iterable, 4);
    await settle();
    expect(pulled).toEqual([0]);
    await ahead.close();
    expect(isClosed()).toBe(true);
    expect(pulled).toEqual([0]);
  });
});
