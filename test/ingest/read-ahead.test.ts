import { setImmediate as turn } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { readAhead } from '../../src/ingest/read-ahead.ts';

/** Text weighs its length; a mark weighs nothing, as a chunk's end does in a load. */
type Item = { readonly text: string } | { readonly mark: number };
const bytesOf = (item: Item) => ('text' in item ? item.text.length : 0);
const isText = (item: Item): item is { text: string } => 'text' in item;
const text = (value: string): Item => ({ text: value });
const mark = (value: number): Item => ({ mark: value });

/** A source that records how far it has been pulled, and can be told to fail. */
function source(items: Item[], failAt?: number) {
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
  it('hands over every item, in order, then undefined', async () => {
    const items = [text('ab'), mark(1), text('cd'), text('é')];
    const ahead = readAhead(source(items).iterable, 1024, bytesOf);
    const seen: Item[] = [];
    for (let item = await ahead.next(); item; item = await ahead.next()) seen.push(item);
    expect(seen).toEqual(items);
    expect(await ahead.next()).toBeUndefined();
    await ahead.close();
  });

  it('takes only the kind of item asked for, leaving the next one in place', async () => {
    const ahead = readAhead(source([text('ab'), text('cd'), mark(1), text('ef')]).iterable, 1024, bytesOf);
    expect(await ahead.nextIf(isText)).toEqual(text('ab'));
    expect(await ahead.nextIf(isText)).toEqual(text('cd'));
    expect(await ahead.nextIf(isText)).toBeUndefined();
    expect(await ahead.nextIf(isText)).toBeUndefined();
    expect(await ahead.next()).toEqual(mark(1));
    expect(await ahead.nextIf(isText)).toEqual(text('ef'));
    expect(await ahead.nextIf(isText)).toBeUndefined();
    await ahead.close();
  });

  it('gives each item to one reader when two wait at once', async () => {
    const ahead = readAhead(source([text('ab'), text('cd'), mark(1)]).iterable, 1024, bytesOf);
    const [first, second, third] = await Promise.all([ahead.nextIf(isText), ahead.nextIf(isText), ahead.next()]);
    expect([first, second, third]).toEqual([text('ab'), text('cd'), mark(1)]);
    await ahead.close();
  });

  it('reads ahead of a consumer that waits, up to the limit, and on once it reads again', async () => {
    const { iterable, pulled } = source([text('aaaa'), text('bbbb'), mark(1), text('cccc'), text('dddd'), text('e')]);
    const ahead = readAhead(iterable, 8, bytesOf);
    await settle();
    // Two items make the 8 bytes of the limit: the producer waits there, the consumer having read nothing.
    expect(pulled).toEqual([0, 1]);
    expect(await ahead.next()).toEqual(text('aaaa'));
    await settle();
    // Four bytes waiting: the mark (which weighs nothing) and one more text come in, and the limit is reached again.
    expect(pulled).toEqual([0, 1, 2, 3]);
    await ahead.close();
  });

  it('throws the source error to the consumer after what came before it', async () => {
    const ahead = readAhead(source([text('ok'), text('never')], 1).iterable, 1024, bytesOf);
    expect(await ahead.next()).toEqual(text('ok'));
    await expect(ahead.next()).rejects.toThrow('bad item 1');
    await ahead.close();
  });

  it('stops a producer that waits at the limit, closing its source', async () => {
    const { iterable, pulled, isClosed } = source([text('aaaa'), text('bbbb'), text('cccc')]);
    const ahead = readAhead(iterable, 4, bytesOf);
    await settle();
    expect(pulled).toEqual([0]);
    await ahead.close();
    expect(isClosed()).toBe(true);
    expect(pulled).toEqual([0]);
  });
});
