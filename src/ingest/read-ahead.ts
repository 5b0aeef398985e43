/**
 * Pulls an async source ahead of its consumer, up to `limitBytes` of text waiting, as Buffers (off V8's heap).
 * A load's chunks alternate between COPY and a merge statement on one connection: while the database merges a
 * chunk, the read-ahead keeps decompressing and parsing the next one, so Node and the server work at the same
 * time instead of in turn. Markers (any non-string item) pass through in order and weigh nothing.
 *
 * The consumer may read the same iterator through several streams (one per COPY): `next` is called directly,
 * never through `for await`, whose `break` would close the source. `close` stops the producer and waits for it.
 */
export interface ReadAhead<M> {
  next(): Promise<IteratorResult<Buffer | M>>;
  close(): Promise<void>;
}

export function readAhead<M>(source: AsyncIterable<string | M>, limitBytes: number): ReadAhead<M> {
  const queue: (Buffer | M)[] = [];
  let queuedBytes = 0;
  let finished = false;
  let failure: { error: unknown } | undefined;
  let stopped = false;
  let wakeConsumer: (() => void) | undefined;
  let wakeProducer: (() => void) | undefined;
  const wake = () => {
    wakeConsumer?.();
    wakeConsumer = undefined;
  };

  const producer = (async () => {
    try {
      for await (const item of source) {
        if (stopped) break;
        if (typeof item === 'string') {
          const bytes = Buffer.from(item);
          queue.push(bytes);
          queuedBytes += bytes.length;
        } else {
          queue.push(item);
        }
        wake();
        while (queuedBytes >= limitBytes && !stopped) await new Promise<void>((resolve) => (wakeProducer = resolve));
        if (stopped) break;
      }
    } catch (error) {
      failure = { error };
    } finally {
      finished = true;
      wake();
    }
  })();

  return {
    async next() {
      for (;;) {
        const item = queue.shift();
        if (item !== undefined) {
          if (Buffer.isBuffer(item)) {
            queuedBytes -= item.length;
            if (queuedBytes < limitBytes) {
              wakeProducer?.();
              wakeProducer = undefined;
            }
          }
          return { done: false, value: item };
        }
        if (failure) throw failure.error;
        if (finished) return { done: true, value: undefined };
        await new Promise<void>((resolve) => (wakeConsumer = resolve));
      }
    },
    async close() {
      stopped = true;
      wakeProducer?.();
      wakeProducer = undefined;
      await producer;
    },
  };
}
