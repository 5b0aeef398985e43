import { readdirSync } from 'node:fs';
import path from 'node:path';
import { packageRoot } from '../../src/package-root.ts';

/** The TypeScript files of recon and of its packages, their tests aside, relative to the root. */
export function productFiles(root = packageRoot()): string[] {
  const found: string[] = [];
  const walk = (folder: string) => {
    for (const entry of readdirSync(path.join(root, folder), { withFileTypes: true })) {
      const relative = path.join(folder, entry.name);
      if (entry.isDirectory()) {
        if (entry.name !== 'node_modules' && entry.name !== 'test') walk(relative);
      } else if (entry.name.endsWith('.ts')) {
        found.push(relative);
      }
    }
  };
  for (const folder of ['cli', 'src', 'pipelines', 'packages']) walk(folder);
  return found;
}
