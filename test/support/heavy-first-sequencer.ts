/**
 * The order vitest starts the test files in: the heavy ones first, longest first (heavy-files.ts), then the rest as
 * vitest orders them. vitest's own order is by the last run's durations, kept in its cache, and by size without one:
 * on a clean clone, as CI runs, the simulator's seeds (2 kB, 80 s) started after six minutes and ran on alone for
 * 45 s. Started first, each long file runs beside the others and the run ends on short ones, on both cores.
 */
import path from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';
import { HEAVY_FILES } from './heavy-files.ts';

export class HeavyFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const weightOf = (file: TestSpecification) =>
      HEAVY_FILES[path.relative(this.ctx.config.root, file.moduleId).split(path.sep).join('/')];
    const heavy = files.filter((file) => weightOf(file) !== undefined).sort((a, b) => weightOf(b)! - weightOf(a)!);
    const rest = await super.sort(files.filter((file) => weightOf(file) === undefined));
    return [...heavy, ...rest];
  }
}
