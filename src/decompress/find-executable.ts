import { constants } from 'node:fs';
import { access } from 'node:fs/promises';
import path from 'node:path';

/** The first of `names` found as an executable on PATH, or undefined. */
export async function findExecutable(
  names: readonly string[],
  searchPath = process.env['PATH'] ?? '',
): Promise<string | undefined> {
  const directories = searchPath.split(path.delimiter).filter((directory) => directory !== '');
  for (const name of names) {
    for (const directory of directories) {
      const candidate = path.join(directory, name);
      try {
        await access(candidate, constants.X_OK);
        return candidate;
      } catch {
        // not in this directory
      }
    }
  }
  return undefined;
}
