import { setTimeout as sleep } from 'node:timers/promises';

/**
 * Resolves with the first truthy answer of `check`, asked every `everyMs`: for a state another process reaches
 * (a lock it waits on, a row it writes), which this process cannot be told about. Fails naming `what` after
 * `timeoutMs`, so a test that never gets there says what it was waiting for.
 */
export async function waitUntil<T>(
  what: string,
  check: () => Promise<T | undefined | null | false> | T | undefined | null | false,
  { timeoutMs = 20_000, everyMs = 25 }: { timeoutMs?: number; everyMs?: number } = {},
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const answer = await check();
    if (answer) return answer;
    if (Date.now() > deadline) throw new Error(`still waiting after ${timeoutMs} ms for ${what}`);
    await sleep(everyMs);
  }
}
