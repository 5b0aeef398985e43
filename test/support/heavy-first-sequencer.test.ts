import { existsSync } from 'node:fs';
import path from 'node:path';
import { expect, it } from 'vitest';
import type { TestSpecification, Vitest } from 'vitest/node';
import { packageRoot } from '../../src/package-root.ts';
import config from '../../vitest.config.ts';
import { HeavyFirstSequencer } from './heavy-first-sequencer.ts';
import { HEAVY_FILES } from './heavy-files.ts';

const root = packageRoot();

it('the suite starts its files with the heavy-first sequencer', () => {
  expect(config.test?.sequence?.sequencer).toBe(HeavyFirstSequencer);
});

it('every heavy file is a test file of the suite: a file renamed or split is named here again', () => {
  const include = config.test?.include ?? [];
  const notInSuite = Object.keys(HEAVY_FILES).filter(
    (file) => !existsSync(path.join(root, file)) || !include.some((pattern) => path.matchesGlob(file, pattern)),
  );
  expect(notInSuite).toEqual([]);
});

it('starts the heavy files first, longest first, then the others largest first', async () => {
  const project = { name: '', config: { sequence: { groupOrder: 0 }, isolate: false } };
  const specification = (file: string) =>
    ({ moduleId: path.join(root, file), project }) as unknown as TestSpecification;
  const context = { config: { root }, cache: { getTestSpecificationResult: () => undefined } } as unknown as Vitest;
  // Two files not in the list, the smaller first (no test files, but their sizes are what vitest goes by), and two
  // heavy files, the shorter first.
  const files = [
    'test/support/heavy-files.ts',
    'test/cli/demo-command.test.ts',
    'README.md',
    'test/simulation/simulate-pglite.test.ts',
  ];
  const sorted = await new HeavyFirstSequencer(context).sort(files.map(specification));
  expect(sorted.map((spec) => path.relative(root, spec.moduleId))).toEqual([
    'test/simulation/simulate-pglite.test.ts',
    'test/cli/demo-command.test.ts',
    'README.md',
    'test/support/heavy-files.ts',
  ]);
});
