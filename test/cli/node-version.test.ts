import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { requiredNode, satisfiesMinimum } from '../../cli/require-node.js';
import { packageRoot } from '../../src/package-root.ts';

const root = packageRoot();
const engines = (JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as { engines: { node: string } })
  .engines.node;

// A preload that makes this Node report an older version: the check sees what an older Node would show it.
const folder = mkdtempSync(path.join(tmpdir(), 'recon-node-version-'));
afterAll(() => rmSync(folder, { recursive: true, force: true }));
function olderNode(version: string): string {
  const preload = path.join(folder, `node-${version}.mjs`);
  writeFileSync(
    preload,
    `Object.defineProperty(process, 'versions', { value: { ...process.versions, node: '${version}' } });\n`,
  );
  return preload;
}

const ONE_LINE = /^recon needs Node 22\.18 or newer \(Node 24 LTS recommended\); this is Node [\d.]+ \(.+\)\n$/;

describe('the Node version check', () => {
  it('reads its minimum from package.json engines', () => {
    expect(engines).toBe('>=22.18');
    expect(requiredNode()).toBe('22.18');
  });

  it('compares versions part by part', () => {
    expect(satisfiesMinimum('22.18.0', '22.18')).toBe(true);
    expect(satisfiesMinimum('24.0.0', '22.18')).toBe(true);
    expect(satisfiesMinimum('22.100.0', '22.18')).toBe(true);
    expect(satisfiesMinimum('22.12.0', '22.18')).toBe(false);
    expect(satisfiesMinimum('20.20.2', '22.18')).toBe(false);
    expect(satisfiesMinimum('9.0.0', '22.18')).toBe(false);
  });

  it('stops recon on a Node older than the minimum with one line, before loading anything else', () => {
    // Node 22.12 can run neither recon's TypeScript nor @recon/protocol's: a load would fail with a stack trace.
    const result = spawnSync(process.execPath, ['--import', olderNode('22.12.0'), 'cli/main.ts', 'runs'], {
      cwd: root,
      encoding: 'utf8',
      env: { ...process.env, DATABASE_URL: 'postgres://nobody@127.0.0.1:1/none' },
    });
    expect(result.status).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr).toMatch(ONE_LINE);
    expect(result.stderr).toContain('this is Node 22.12.0');
  });

  it('lets a recent enough Node through', () => {
    const result = spawnSync(process.execPath, ['--import', olderNode('22.18.0'), 'cli/main.ts', '--help'], {
      cwd: root,
      encoding: 'utf8',
    });
    expect(result.stderr).toBe('');
    expect(result.status).toBe(0);
    expect(result.stdout).toMatch(/^usage: recon <command>/);
  });

  it('stops `npm start` before the build with the same line', () => {
    const result = spawnSync('npm', ['start', '--silent'], {
      cwd: root,
      encoding: 'utf8',
      env: { ...process.env, NODE_OPTIONS: `--import=${olderNode('20.20.2')}` },
    });
    expect(result.status).not.toBe(0);
    expect(result.stderr.split('\n')[0]).toMatch(/^recon needs Node 22\.18 or newer .* this is Node 20\.20\.2 /);
    expect(result.stdout + result.stderr).not.toContain('ERR_UNKNOWN_FILE_EXTENSION');
    expect(result.stdout + result.stderr).not.toContain('tsc -p');
  });

  const systemNode = findOlderSystemNode();
  it.runIf(systemNode)(`stops the built recon on a real older Node (${systemNode ?? 'none here'})`, () => {
    const result = spawnSync(systemNode!, ['cli/require-node.js'], { cwd: root, encoding: 'utf8' });
    expect(result.status).toBe(1);
    expect(result.stderr).toMatch(ONE_LINE);
  });
});

/** A Node older than the minimum installed on the machine (Debian's, say), to run the check for real. */
function findOlderSystemNode(): string | undefined {
  for (const candidate of ['/usr/bin/node', '/usr/local/bin/node']) {
    try {
      const version = execFileSync(candidate, ['-p', 'process.versions.node'], { encoding: 'utf8' }).trim();
      if (!satisfiesMinimum(version, '22.18')) return candidate;
    } catch {
      // not installed
    }
  }
  return undefined;
}
