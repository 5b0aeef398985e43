/**
 * The sandbox's notion of "now". Every time rule of the service (the 6-day approval wait, the 7-day capture
 * window) is evaluated against this clock, never against Date.now(), so tests and the demo can move time forward.
 */
export interface SandboxClock {
  now(): Date;
  advance(ms: number): void;
  advanceDays(days: number): void;
  /** Called after every move forward; the sandbox re-evaluates expiries there. Returns an unsubscribe function. */
  onAdvance(listener: (now: Date) => void): () => void;
}

export interface SandboxClockOptions {
  /** The clock's reading at creation. Default: the real time. */
  readonly start?: Date;
  /** When true (default) the clock runs with real time from `start`; when false it moves only by `advance`. */
  readonly ticking?: boolean;
}

const DAY_MS = 24 * 60 * 60 * 1000;

export function createSandboxClock(options: SandboxClockOptions = {}): SandboxClock {
  const ticking = options.ticking ?? true;
  const startedAt = Date.now();
  const start = options.start?.getTime() ?? startedAt;
  let offsetMs = 0;
  const listeners = new Set<(now: Date) => void>();

  function now(): Date {
    const elapsed = ticking ? Date.now() - startedAt : 0;
    return new Date(start + elapsed + offsetMs);
  }

  function advance(ms: number): void {
    // Time only moves forward: a backward step would un-expire approvals and captures the store already settled.
    if (!Number.isFinite(ms) || ms < 0) throw new RangeError(`the sandbox clock only moves forward (got ${ms} ms)`);
    offsetMs += ms;
    const reading = now();
    for (const listener of listeners) listener(reading);
  }

  return {
    now,
    advance,
    advanceDays: (days) => advance(days * DAY_MS),
    onAdvance(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
  };
}
