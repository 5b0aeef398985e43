/** Runs at most `size` pieces of work at once, the others waiting their turn in the order they came. */
export interface InFlightLimit {
  run<T>(work: () => Promise<T>): Promise<T>;
}

export function createInFlightLimit(size: number): InFlightLimit {
  if (!Number.isInteger(size) || size < 1)
    throw new RangeError(`at most how many at once is a whole number, 1 or more (got ${size})`);
  let running = 0;
  const waiting: (() => void)[] = [];
  return {
    async run(work) {
      if (running < size) running++;
      // The slot passes straight from the work that frees it to the next in line: `running` stays as it is.
      else await new Promise<void>((resolve) => waiting.push(resolve));
      try {
        return await work();
      } finally {
        const next = waiting.shift();
        if (next) next();
        else running--;
      }
    },
  };
}
