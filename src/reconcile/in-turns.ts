/**
 * Runs `work` on every item, `workers` at a time, in order: each worker takes the next item once it has finished
 * one, so items of unequal cost keep every worker busy to the end. The results come flattened, in the order the
 * items finished. After a failure no item is started, and the first error is thrown once those under way have ended
 * (their transactions settled, nothing left running behind the caller's cleanup).
 */
export async function inTurns<I, R>(
  items: readonly I[],
  workers: number,
  work: (item: I) => Promise<readonly R[]>,
): Promise<R[]> {
  const results: R[] = [];
  let next = 0;
  let failed = false;
  const worker = async (): Promise<void> => {
    while (!failed && next < items.length) {
      const item = items[next++]!;
      try {
        results.push(...(await work(item)));
      } catch (error) {
        failed = true;
        throw error;
      }
    }
  };
  const settled = await Promise.allSettled(Array.from({ length: Math.min(workers, items.length) }, worker));
  const failure = settled.find((result) => result.status === 'rejected');
  if (failure) throw failure.reason;
  return results;
}
