/**
 * `listener` wrapped so that it cannot throw into the background work that calls it: a faulty event
 * listener must not stop a delivery or turn into an unhandled rejection.
 */
export function neverThrowing<Args extends unknown[]>(
  listener: ((...args: Args) => void) | undefined,
): (...args: Args) => void {
  return (...args) => {
    try {
      listener?.(...args);
    } catch {
      // The listener's fault is its own: the work it observes goes on.
    }
  };
}
