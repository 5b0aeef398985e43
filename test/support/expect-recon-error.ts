import { expect } from 'vitest';
import { isReconError, type ReconErrorCode } from '../../src/errors.ts';

/**
 * Runs `work` and expects it to fail with a ReconError of `code` whose message is one line naming every
 * `mention` (the file, the entry, the line). Returns the message for further checks.
 */
export async function expectReconError(
  work: () => Promise<unknown>,
  code: ReconErrorCode,
  ...mentions: string[]
): Promise<string> {
  const error = await work().then(
    () => undefined,
    (caught: unknown) => caught,
  );
  if (!isReconError(error, code)) throw new Error(`expected ReconError ${code}, got ${String(error)}`);
  expect(error.message).not.toContain('\n');
  for (const mention of mentions) expect(error.message).toContain(mention);
  return error.message;
}
