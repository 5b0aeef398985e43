import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { packageRoot } from '../../src/package-root.ts';
import { documentationFiles, readMarkdown, readText } from './markdown.ts';

const root = packageRoot();
const readme = readText(path.join(root, 'README.md'));
const pages = documentationFiles(root).filter((file) => path.basename(path.dirname(file)) === 'docs');

describe('the README', () => {
  it('stays short: at most 150 lines, the reference lives in docs/', () => {
    expect(readme.trimEnd().split('\n').length).toBeLessThanOrEqual(150);
  });

  it('gives the install command and the test command exactly as .ci/run runs them', () => {
    const ci = readFileSync(path.join(root, '.ci', 'run'), 'utf8');
    const shell = readMarkdown(readme)
      .blocks.filter((block) => block.language === 'sh')
      .flatMap((block) => block.text.split('\n'));
    expect(shell).toContain('npm ci && npm start');
    expect(ci).toMatch(/^npm ci$/m);
    const url = /DATABASE_URL="\$\{DATABASE_URL:-([^}]+)\}"/.exec(ci)?.[1];
    expect(url).toBeDefined();
    expect(ci).toMatch(/^npm test\b/m);
    expect(shell).toContain(`DATABASE_URL=${url} npm test`);
  });

  it('gives no duration, which the machine and its load decide: those live in docs/ with where they were measured', () => {
    let inBlock = false;
    const durations = readme.split('\n').flatMap((text, index) => {
      if (/^ {0,3}(```|~~~)/.test(text)) inBlock = !inBlock;
      if (inBlock) return [];
      return [...text.matchAll(/\b\d+(?:[.,]\d+)? ?(?:ms|s|seconds?|min|minutes?|hours?)\b/g)].map(
        (match) => `README.md:${index + 1}: ${match[0]}`,
      );
    });
    expect(durations).toEqual([]);
  });

  it('says where the code of each stage lives', () => {
    for (const folder of [
      'src/receive/',
      'src/decompress/',
      'src/parse/',
      'src/normalize/',
      'src/ingest/',
      'src/reconcile/',
      'src/report/',
      'cli/',
      'pipelines/',
      'packages/protocol',
      'packages/sandbox',
      'sql/',
    ]) {
      expect(readme, folder).toContain(folder);
    }
  });
});

describe('the pages of docs/', () => {
  it.each(pages.map((file) => [path.relative(root, file), file]))(
    '%s names its reader at its top, in one line',
    (_name, file) => {
      const lines = readText(file).split('\n');
      expect(lines[0]).toMatch(/^# \S/);
      expect(lines[1]).toBe('');
      expect(lines[2]).toMatch(/^\*\*Reader:\*\* \S/);
    },
  );

  it('architecture.md keeps the section on how a file is loaded', () => {
    expect(readMarkdown(readText(path.join(root, 'docs', 'architecture.md'))).anchors).toContain(
      'how-a-file-is-loaded',
    );
  });
});

describe('the documentation', () => {
  it('cites no issue numbers', () => {
    const cited: string[] = [];
    for (const file of documentationFiles(root)) {
      readText(file)
        .split('\n')
        .forEach((text, index) => {
          if (/\bissues?\s*#?\d+|(?:^|[\s(])#\d+\b/i.test(text))
            cited.push(`${path.relative(root, file)}:${index + 1}: ${text.trim()}`);
        });
    }
    expect(cited).toEqual([]);
  });
});
