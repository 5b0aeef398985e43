import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { packageRoot } from '../../src/package-root.ts';
import { readText } from './markdown.ts';

const root = packageRoot();
/** Each package.json of the repository, by the name architecture.md's table gives it. */
const MANIFESTS = {
  recon: 'package.json',
  protocol: 'packages/protocol/package.json',
  sandbox: 'packages/sandbox/package.json',
};

/** Where each dependency is asked for: `recon`, `recon dev`, `sandbox dev`, ... */
function declared(): Map<string, Set<string>> {
  const found = new Map<string, Set<string>>();
  for (const [name, file] of Object.entries(MANIFESTS)) {
    const manifest = JSON.parse(readFileSync(path.join(root, file), 'utf8')) as Record<
      'dependencies' | 'devDependencies',
      Record<string, string> | undefined
    >;
    for (const [kind, label] of [
      ['dependencies', name],
      ['devDependencies', `${name} dev`],
    ] as const) {
      for (const dependency of Object.keys(manifest[kind] ?? {})) {
        if (!found.has(dependency)) found.set(dependency, new Set());
        found.get(dependency)!.add(label);
      }
    }
  }
  return found;
}

/** The table of `## Why each dependency`: each package named in a row's first cell, with the places its second cell names. */
function documentedDependencies(page: string): Map<string, Set<string>> {
  const start = page.indexOf('\n## Why each dependency\n');
  if (start < 0) throw new Error('docs/architecture.md has no section ## Why each dependency');
  const end = page.indexOf('\n## ', start + 1);
  const section = page.slice(start, end < 0 ? undefined : end);
  const found = new Map<string, Set<string>>();
  for (const [, packages, places] of section.matchAll(/^\| ((?:`[^`]+`(?:, )?)+) \| ([^|]+) \|/gm)) {
    for (const [, name] of packages!.matchAll(/`([^`]+)`/g)) {
      if (!found.has(name!)) found.set(name!, new Set());
      for (const place of places!.split(',')) found.get(name!)!.add(place.trim());
    }
  }
  return found;
}

const sorted = (map: Map<string, Set<string>>) =>
  Object.fromEntries([...map].sort(([a], [b]) => a.localeCompare(b)).map(([name, set]) => [name, [...set].sort()]));

describe("docs/architecture.md's dependencies", () => {
  it('says what every dependency of every package.json is for, where it is asked for, and names no other', () => {
    const page = readText(path.join(root, 'docs', 'architecture.md'));
    const wanted = declared();
    expect(wanted.size).toBeGreaterThan(30);
    expect(sorted(documentedDependencies(page))).toEqual(sorted(wanted));
  });

  it('reads a row of several packages, and a package in several rows', () => {
    const page = [
      '## Why each dependency',
      '',
      '| package | in | for |',
      '|---|---|---|',
      '| `a` | recon, sandbox dev | x |',
      '| `b`, `@types/c` | recon dev | y, with `code` |',
      '| `@types/c` | sandbox dev | z |',
      '',
      '## Next',
      '| `d` | recon | not in the section |',
    ].join('\n');
    expect(sorted(documentedDependencies(`# A\n${page}`))).toEqual({
      '@types/c': ['recon dev', 'sandbox dev'],
      a: ['recon', 'sandbox dev'],
      b: ['recon dev'],
    });
  });
});
