import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { expect, it } from 'vitest';
import { packageRoot } from '../../src/package-root.ts';

const root = packageRoot();
const read = (file: string) => readFileSync(path.join(root, file), 'utf8');

it('docs/architecture.md names every folder of src/, and nothing that is gone', () => {
  const folders = readdirSync(path.join(root, 'src'), { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .map((entry) => entry.name)
    .sort();
  const architecture = read('docs/architecture.md');
  const named = [
    ...new Set([...architecture.matchAll(/\(\.\.\/src\/([a-z-]+)\/\)/g)].map((match) => match[1]!)),
  ].sort();
  expect(named).toEqual(folders);
});

it("the README's picture of the flow names the stages' folders as architecture.md does", () => {
  const picture = [...read('README.md').matchAll(/^(\w+)\s+src\/([a-z-]+)\/\s/gm)].map((match) => [match[1], match[2]]);
  const stages = [...read('docs/architecture.md').matchAll(/^\| (\w+) \| \[src\/([a-z-]+)\/\]/gm)].map((match) => [
    match[1],
    match[2],
  ]);
  expect(picture.length).toBeGreaterThanOrEqual(7);
  expect(picture).toEqual(stages);
});
