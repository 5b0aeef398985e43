/**
 * What a test receiver has received so far, awaitable: `until(condition)` resolves as soon as the receiver's
 * `notify()` finds the condition true. Tests wait for the event itself instead of polling with sleeps.
 */
export interface Arrivals {
  /** Call after each arrival. */
  notify(): void;
  until(condition: () => boolean): Promise<void>;
}

export function createArrivals(): Arrivals {
  let waiting: { condition: () => boolean; resolve: () => void }[] = [];
  return {
    notify() {
      waiting = waiting.filter((waiter) => {
        if (!waiter.condition()) return true;
        waiter.resolve();
        return false;
      });
    },
    until(condition) {
      if (condition()) return Promise.resolve();
      return new Promise((resolve) => waiting.push({ condition, resolve }));
    },
  };
}
