/**
 * Pulls an async source ahead of its consumer, up to `limitBytes` of items waiting (as `bytesOf` weighs them).
 * A load's chunks alternate between COPY and a merge statement on one connection: while the database merges a
 * chunk, the read-ahead keeps decompressing and parsing the next one, so Node and the server work at the same
 * time instead of in turn. Once the limit is reached the source waits: memory stays constant, whatever the file.
 *
 * The consumer may read the same read-ahead through several streams (one per COPY): `next` is called directly,
 * never through `for await`, whose `break` would close the source. `nextIf` takes an item only if it is of the kind
 * wanted, so that a stream can stop before the first item that is not its own and leave it for the caller.
 * `close` stops the producer and waits for it.
 */
export interface ReadAhead<T> {
  /** The next item; undefined once the source has ended. */
  next(): Promise<T | undefined>;
  /** The next item if `wanted` accepts it; undefined, the item left in place, if not or at the end. */
  nextIf<S extends T>(wanted: (item: T) => item is S): Promise<S | undefined>;
  close(): Promise<void>;
}

export function readAhead<T>(source: AsyncIterable<T>, limitBytes: number, bytesOf: (item: T) => number): ReadAhead<T> {
  const queue: T[] = [];
  let queuedBytes = 0;
  let finished = false;
  let failure: { error: unknown } | undefined;
  let stopped = false;
  // Consumers waiting for an item: a stream closed while it waited may still wait beside the next one.
  const waitingConsumers: (() => void)[] = [];
  let wakeProducer: (() => void) | undefined;
  const wakeConsumers = () => {
    for (const wake of waitingConsumers.splice(0)) wake();
  };

  const producer = (async () => {
    try {
      for await (const item of source) {
        if (stopped) break;
        queue.push(item);
        queuedBytes += bytesOf(item);
        wakeConsumers();
        while (queuedBytes >= limitBytes && !stopped) await new Promise<void>((resolve) => (wakeProducer = resolve));
        if (stopped) break;
      }
    } catch (error) {
      failure = { error };
    } finally {
      finished = true;
      wakeConsumers();
    }
  })();

  /**
   * The first item, taken if `wanted` accepts it (or always, without `wanted`); undefined otherwise or at the end.
   * Checked and taken with no await in between, so that no other reader can take the item meanwhile.
   */
  async function takeFirst(wanted?: (item: T) => boolean): Promise<T | undefined> {
    for (;;) {
      if (queue.length > 0) return !wanted || wanted(queue[0]!) ? take() : undefined;
      if (failure) throw failure.error;
      if (finished) return undefined;
      await new Promise<void>((resolve) => waitingConsumers.push(resolve));
    }
  }

  function take(): T {
    const item = queue.shift()!;
    const bytes = bytesOf(item);
    if (bytes > 0) {
      queuedBytes -= bytes;
      if (queuedBytes < limitBytes) {
        wakeProducer?.();
        wakeProducer = undefined;
      }
    }
    return item;
  }

  return {
    next() {
      return takeFirst();
    },
    nextIf<S extends T>(wanted: (item: T) => item is S) {
      return takeFirst(wanted) as Promise<S | undefined>;
    },
    async close() {
      stopped = true;
      wakeProducer?.();
      wakeProducer = undefined;
      await producer;
    },
  };
}
