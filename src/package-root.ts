import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** The folder holding package.json: sql/ and fixtures/ live there whether code runs from src/ or dist/. */
export function packageRoot(): string {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  while (!existsSync(path.join(dir, 'package.json'))) {
    const parent = path.dirname(dir);
    if (parent === dir) throw new Error('recon: package.json not found above ' + fileURLToPath(import.meta.url));
    dir = parent;
  }
  return dir;
}
