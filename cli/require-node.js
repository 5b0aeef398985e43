// Plain JavaScript on purpose: it must run, and say what is wrong, on a Node too old to run recon's TypeScript.
// It runs first: imported first by cli/main.ts, and before the build in `npm start` and `npm install`.
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import process from 'node:process';
import { fileURLToPath } from 'node:url';

/**
 * True when `version` (like 22.18.0) is at least `minimum` (like 22.18).
 * @param {string} version
 * @param {string} minimum
 * @returns {boolean}
 */
export function satisfiesMinimum(version, minimum) {
  const have = version.split('.').map(Number);
  const need = minimum.split('.').map(Number);
  for (let i = 0; i < need.length; i++) {
    const a = have[i] ?? 0;
    const b = need[i] ?? 0;
    if (a !== b) return a > b;
  }
  return true;
}

/**
 * The minimum of package.json's `engines.node` (written `>=X.Y`), found above this file in cli/ and dist/ alike.
 * @returns {string | undefined}
 */
export function requiredNode() {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  while (!existsSync(path.join(dir, 'package.json'))) {
    const parent = path.dirname(dir);
    if (parent === dir) return undefined;
    dir = parent;
  }
  const range = JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8')).engines?.node ?? '';
  return /^>=\s*(\d+(?:\.\d+){0,2})$/.exec(range.trim())?.[1];
}

const minimum = requiredNode();
if (minimum && !satisfiesMinimum(process.versions.node, minimum)) {
  process.stderr.write(
    `recon needs Node ${minimum} or newer (Node 24 LTS recommended); this is Node ${process.versions.node} (${process.execPath})\n`,
  );
  process.exit(1);
}
