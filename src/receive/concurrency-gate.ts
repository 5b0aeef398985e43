/**
 * At most `size` holders at once; the others wait their turn, each for at most `waitMs`, and at most `maxWaiting`
 * of them (a burst past that is turned away at once). What keeps one kind of request from taking every pooled
 * database connection: deliveries, notifications and the job queue each keep a share of the pool.
 */
export interface ConcurrencyGate {
  /** A slot now, or undefined when every slot is taken. */
  tryEnter(): Release | undefined;
  /** Runs `work` in a slot; throws GateBusyError when none frees up within the wait (or too many already wait). */
  run<T>(work: () => Promise<T>): Promise<T>;
}

export type Release = () => void;

/** Every slot stayed taken: the request is answered 503, to be sent again later. */
export class GateBusyError extends Error {
  constructor(what: string) {
    super(`too many ${what} at once, try again later`);
    this.name = 'GateBusyError';
  }
}

export function createConcurrencyGate(
  what: string,
  size: number,
  { waitMs = 10_000, maxWaiting = 100 } = {},
): ConcurrencyGate {
  let held = 0;
  const waiting: (() => void)[] = [];

  const release = (): Release => {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = waiting.shift();
      if (next) next();
      else held--;
    };
  };

  const enter = (): Promise<Release> => {
    if (held < size) {
      held++;
      return Promise.resolve(release());
    }
    if (waiting.length >= maxWaiting) return Promise.reject(new GateBusyError(what));
    return new Promise((resolve, reject) => {
      // The slot passes straight from its releaser to this waiter: `held` stays as it is.
      const take = () => {
        clearTimeout(timer);
        resolve(release());
      };
      const timer = setTimeout(() => {
        waiting.splice(waiting.indexOf(take), 1);
        reject(new GateBusyError(what));
      }, waitMs);
      waiting.push(take);
    });
  };

  return {
    tryEnter() {
      if (held >= size) return undefined;
      held++;
      return release();
    },
    async run(work) {
      const done = await enter();
      try {
        return await work();
      } finally {
        done();
      }
    },
  };
}
